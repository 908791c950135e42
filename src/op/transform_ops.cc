// Injective data-movement operators: reshape, transpose, expand_dims, squeeze,
// concatenate, split, strided_slice, take, broadcast_to.
#include <algorithm>
#include <stdexcept>

#include "op/builtin_ops.h"
#include "op/movement_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"
#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

Type reshape_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "reshape");
  return tensor_type_of_dims(reshape_target(x.dims, reshape_attrs(attrs).target(), "reshape"), x.dtype);
}

Type transpose_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "transpose");
  std::vector<DimExpr> dims;
  for (int64_t d : transpose_permutation(x.ndim(), attrs, "transpose")) dims.push_back(x.dims[size_t(d)]);
  return tensor_type_of_dims(std::move(dims), x.dtype);
}

Type expand_dims_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "expand_dims";
  const TensorTypeNode& x = expect_tensor(args, 0, op);
  const ExpandDimsAttrs expand = expand_dims_attrs(attrs);
  int64_t axis = expand.axis, rank = x.ndim();
  if (axis < -rank - 1 || axis > rank)
    type_fail(op, "axis " + std::to_string(axis) + " is out of range for x " + clipped_text(dims_to_string(x.dims)) +
                      " (allowed " +
                      std::to_string(-rank - 1) + ".." + std::to_string(rank) + ")");
  if (axis < 0) axis += rank + 1;
  // Checked before the shape is built: num_newaxis alone could ask for gigabytes of dimensions.
  if (expand.num_newaxis > int64_t(kMaxTensorRank) - rank)
    type_fail(op, "num_newaxis " + std::to_string(expand.num_newaxis) + " would give x " +
                      clipped_text(dims_to_string(x.dims)) + " more than " + std::to_string(kMaxTensorRank) +
                      " dimensions");
  std::vector<DimExpr> dims = x.dims;
  dims.insert(dims.begin() + axis, size_t(expand.num_newaxis), DimExpr(int64_t(1)));
  return tensor_type_of_dims(std::move(dims), x.dtype);
}

Type squeeze_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "squeeze");
  return tensor_type(squeeze_shape(x.shape, attrs, "squeeze"), x.dtype);
}

// Relay style: one argument, a tuple of tensors.
Type concatenate_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "concatenate";
  if (args.size() != 1) type_fail(op, "expects 1 argument (a tuple of tensors), got " + std::to_string(args.size()));
  const TupleTypeNode* tuple = as_tuple(args[0]);
  if (!tuple) type_fail(op, "its argument must be a tuple of tensors, got " + type_to_string(args[0]));
  if (tuple->fields.empty()) type_fail(op, "cannot concatenate an empty tuple");
  std::vector<const TensorTypeNode*> fields;
  for (size_t i = 0; i < tuple->fields.size(); ++i) {
    const TensorTypeNode* t = as_tensor(tuple->fields[i]);
    if (!t) type_fail(op, "field " + std::to_string(i) + " of the tuple must be a tensor, got " + type_to_string(tuple->fields[i]));
    fields.push_back(t);
  }
  const TensorTypeNode& first = *fields[0];
  if (first.ndim() == 0) type_fail(op, "cannot concatenate scalars (field 0 has rank 0)");
  int64_t axis = normalize_axis(concatenate_attrs(attrs).axis, first.ndim(), op);
  auto shape_of = [](const TensorTypeNode& t) { return clipped_text(dims_to_string(t.dims)); };
  std::vector<DimExpr> dims = first.dims;
  for (size_t i = 0; i < fields.size(); ++i) {
    const TensorTypeNode& t = *fields[i];
    if (t.dtype != first.dtype)
      type_fail(op, "field " + std::to_string(i) + " is " + dtype_name(t.dtype) + " but field 0 is " +
                        dtype_name(first.dtype) + "; dtypes must match");
    if (t.ndim() != first.ndim())
      type_fail(op, "field " + std::to_string(i) + " " + shape_of(t) + " has rank " + std::to_string(t.ndim()) +
                        " but field 0 " + shape_of(first) + " has rank " + std::to_string(first.ndim()));
    // Symbolic dimensions off the axis must be the same expression, unless an
    // AssumedDimEqualities takes two variables as equal (as in matmul).
    for (int d = 0; d < t.ndim(); ++d)
      if (d != axis && t.dims[size_t(d)] != first.dims[size_t(d)] &&
          !AssumedDimEqualities::assume(first.dims[size_t(d)], t.dims[size_t(d)]))
        type_fail(op, "field " + std::to_string(i) + " " + shape_of(t) + " differs from field 0 " + shape_of(first) +
                          " in dimension " + std::to_string(d) + " (only axis " + std::to_string(axis) +
                          " may differ)");
    // The result's extent along the axis is a sum, which a dimension expression cannot hold yet.
    if (!t.dims[size_t(axis)].is_constant())
      type_fail(op, "field " + std::to_string(i) + " " + shape_of(t) + " is symbolic along the concatenated axis " +
                        std::to_string(axis) + "; a sum of dimensions is not supported yet");
    if (i == 0) continue;
    int64_t extent = dims[size_t(axis)].coefficient();
    if (__builtin_add_overflow(extent, t.dims[size_t(axis)].coefficient(), &extent))
      type_fail(op, "the concatenated dimension " + std::to_string(axis) + " overflows int64 at field " +
                        std::to_string(i));
    dims[size_t(axis)] = extent;
  }
  return tensor_type_of_dims(std::move(dims), first.dtype);
}

Type split_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "split";
  const TensorTypeNode& x = expect_min_rank(args, 0, 1, op, "x");
  const SplitAttrs split = split_attrs(attrs);
  int64_t axis = normalize_axis(split.axis, x.ndim(), op);
  // The other dimensions may be symbolic (q, k and v of a (batch, seq, 3C)
  // projection); the split one must be static.
  const DimExpr& extent = x.dims[size_t(axis)];
  if (!extent.is_constant())
    type_fail(op, "splits symbolic dimension " + dim_to_string(extent) + " (dimension " + std::to_string(axis) +
                      " of " + clipped_text(dims_to_string(x.dims)) + "); only a static dimension may be split");
  std::vector<int64_t> sizes;
  try {
    sizes = split_sizes(extent.coefficient(), sections_value(split), op);
  } catch (const Error& e) {
    throw Error(ErrorKind::kType, e.message() + " (dimension " + std::to_string(axis) + " of x " +
                                      clipped_text(dims_to_string(x.dims)) + ")");
  }
  std::vector<Type> fields;
  for (int64_t size : sizes) {
    std::vector<DimExpr> dims = x.dims;
    dims[size_t(axis)] = size;
    fields.push_back(tensor_type_of_dims(std::move(dims), x.dtype));
  }
  return tuple_type(std::move(fields));
}

// A slice whose end names a symbolic dimension (position_ids[:, :seq]):
// that axis must be static and sliced from 0 with step 1, so its length is
// the end itself. That the end is within the axis is taken as written; a
// specialisation states the end, and its static type clamps it, so a value
// beyond the axis gives a shorter type that the readers' types refuse.
Type symbolic_end_slice(const TensorTypeNode& x, const StridedSliceAttrs& slice, const std::vector<SliceAxis>& axes) {
  const std::string op = "strided_slice";
  if (slice.slice_mode != SliceMode::kEnd) type_fail(op, "a symbolic end needs slice_mode \"end\"");
  std::vector<DimExpr> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) dims.push_back(x.dims[i].is_constant() ? DimExpr(axes[i].length) : x.dims[i]);
  for (size_t k = 0; k < slice.begin.size(); ++k) {
    const int64_t axis = slice.axes ? normalize_axis((*slice.axes)[k], x.ndim(), op, "axes entry") : int64_t(k);
    const bool symbolic = !slice.symbolic_end[k].is_constant();
    if (!x.dims[size_t(axis)].is_constant())
      type_fail(op, "slices symbolic dimension " + dim_to_string(x.dims[size_t(axis)]) + " (dimension " +
                        std::to_string(axis) + " of " + clipped_text(dims_to_string(x.dims)) +
                        "); only static dimensions may be sliced yet");
    if (!symbolic) continue;
    const int64_t stride = slice.strides && k < slice.strides->size() ? (*slice.strides)[k] : 1;
    if (slice.begin[k] != 0 || stride != 1)
      type_fail(op, "ends dimension " + std::to_string(axis) + " at symbolic " + dim_to_string(slice.symbolic_end[k]) +
                        " from begin " + std::to_string(slice.begin[k]) + " with stride " + std::to_string(stride) +
                        "; a symbolic end needs begin 0 and stride 1 (its length is then the end)");
    dims[size_t(axis)] = slice.symbolic_end[k];
  }
  return tensor_type_of_dims(std::move(dims), x.dtype);
}

// Symbolic dimensions are allowed where the slice does not cut them (a
// symbolic batch beside a sliced feature axis): the static rule runs with 1
// in their place, and they are put back.
Type strided_slice_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "strided_slice";
  const TensorTypeNode& x = expect_tensor(args, 0, op);
  std::vector<int64_t> stand_in;
  for (const DimExpr& d : x.dims) stand_in.push_back(d.constant().value_or(1));
  std::vector<SliceAxis> axes = strided_slice_axes(stand_in, attrs, op);
  const StridedSliceAttrs slice = strided_slice_attrs(attrs);
  if (!slice.symbolic_end.empty()) return symbolic_end_slice(x, slice, axes);
  if (x.is_static()) {
    std::vector<int64_t> shape;
    for (const SliceAxis& axis : axes) shape.push_back(axis.length);
    return tensor_type(std::move(shape), x.dtype);
  }
  std::vector<bool> cut(x.dims.size(), false);
  for (size_t k = 0; k < slice.begin.size(); ++k)
    cut[size_t(slice.axes ? normalize_axis((*slice.axes)[k], x.ndim(), op, "axes entry") : int64_t(k))] = true;
  std::vector<DimExpr> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (x.dims[i].is_constant()) {
      dims.emplace_back(axes[i].length);
      continue;
    }
    if (cut[i])
      type_fail(op, "slices symbolic dimension " + dim_to_string(x.dims[i]) + " (dimension " + std::to_string(i) +
                        " of " + clipped_text(dims_to_string(x.dims)) + "); only static dimensions may be sliced yet");
    dims.push_back(x.dims[i]);
  }
  return tensor_type_of_dims(std::move(dims), x.dtype);
}

Type take_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "take";
  const TensorTypeNode& data = expect_tensor(args, 0, op);
  const TensorTypeNode& indices = expect_tensor(args, 1, op);
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64)
    type_fail(op, "argument 1 (indices) must be int32 or int64, got " + std::string(dtype_name(indices.dtype)));
  std::optional<int64_t> given_axis = take_attrs(attrs).axis;
  if (!given_axis) {
    if (!data.is_static())
      type_fail(op, "takes from the flattened data " + clipped_text(dims_to_string(data.dims)) +
                        ", whose size is symbolic; only a static one may be flattened");
    return tensor_type_of_dims(indices.dims, data.dtype);
  }
  if (data.ndim() == 0) type_fail(op, "data is a scalar; take along an axis needs at least 1 dimension");
  int64_t axis = normalize_axis(*given_axis, data.ndim(), op);
  // Symbolic indices (an embedding's token ids, (batch, seq)) or a symbolic
  // axis (a sequence's first token): the type does not depend on the
  // axis's size, only the modes' clipping or wrapping at run time does.
  std::vector<DimExpr> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  return tensor_type_of_dims(std::move(dims), data.dtype);
}

// Each dimension of x is 1 or the target's, as the same expression: that a
// symbolic one is 1, or equals another, is known only at run time.
Type symbolic_broadcast_to(const TensorTypeNode& x, const std::vector<DimExpr>& target) {
  const std::string op = "broadcast_to";
  const std::string written = clipped_text(dims_to_string(x.dims)) + " to " + clipped_text(dims_to_string(target));
  if (x.dims.size() > target.size()) type_fail(op, "cannot broadcast x " + written + ": x has the higher rank");
  size_t offset = target.size() - x.dims.size();
  for (size_t i = 0; i < x.dims.size(); ++i)
    if (x.dims[i] != DimExpr(int64_t(1)) && x.dims[i] != target[offset + i])
      type_fail(op, "cannot broadcast x " + written + ": dimension " + std::to_string(i) + " of x is " +
                        dim_to_string(x.dims[i]) + " but the target has " + dim_to_string(target[offset + i]) +
                        " (equal or 1 are known to broadcast; whether they are equal is known only at run time)");
  return tensor_type_of_dims(target, x.dtype);
}

Type broadcast_to_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "broadcast_to";
  const TensorTypeNode& x = expect_tensor(args, 0, op);
  const BroadcastToAttrs given = broadcast_to_attrs(attrs);
  if (!x.is_static() || !given.symbolic.empty()) return symbolic_broadcast_to(x, given.target());
  const std::vector<int64_t>& target = given.shape;
  if (x.shape.size() > target.size())
    type_fail(op, "cannot broadcast x " + shape_str(x.shape) + " of rank " + std::to_string(x.ndim()) +
                      " to the lower-rank shape " + shape_str(target));
  size_t offset = target.size() - x.shape.size();
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (x.shape[i] != 1 && x.shape[i] != target[offset + i])
      type_fail(op, "cannot broadcast x " + shape_str(x.shape) + " to " + shape_str(target) + ": dimension " +
                        std::to_string(i) + " of x has size " + std::to_string(x.shape[i]) + " but the target has " +
                        std::to_string(target[offset + i]) + " (sizes must be equal or 1)");
  return tensor_type(target, x.dtype);
}

}  // namespace

void register_transform_ops() {
  register_op({.name = "reshape",
               .num_inputs = 1,
               .attrs = {{"newshape", AttrKind::kDims, AttrValue()}},
               .type_relation = reshape_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_reshape_attrs(reshape_attrs(attrs)); },
               .doc = "x with a new shape of the same size (0 copies a dimension, -1 infers one)",
               .movement = DataMovement::kView,
               .symbolic_shapes = true});
  register_op({.name = "transpose",
               .num_inputs = 1,
               .attrs = {{"axes", AttrKind::kInts, AttrValue(), true}},
               .type_relation = transpose_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_transpose_attrs(transpose_attrs(attrs)); },
               .doc = "permutes dimensions (default: reverses them)",
               .movement = DataMovement::kIndexed,
               .symbolic_shapes = true});
  register_op({.name = "expand_dims",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue()}, {"num_newaxis", AttrKind::kInt, AttrValue(int64_t(1))}},
               .type_relation = expand_dims_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_expand_dims_attrs(expand_dims_attrs(attrs)); },
               .doc = "inserts num_newaxis dimensions of size 1 at axis",
               .movement = DataMovement::kView,
               .symbolic_shapes = true});
  register_op({.name = "squeeze",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInts, AttrValue(), true}},
               .type_relation = squeeze_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_squeeze_attrs(squeeze_attrs(attrs)); },
               .doc = "drops dimensions of size 1",
               .movement = DataMovement::kView});
  register_op({.name = "concatenate",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(0))}},
               .type_relation = concatenate_relation,
               .pattern = OpPattern::kInjective,
               .doc = "joins a tuple of tensors along axis",
               .symbolic_shapes = true});
  register_op({.name = "split",
               .num_inputs = 1,
               .attrs = {{"indices_or_sections", AttrKind::kIntOrInts, AttrValue()},
                         {"axis", AttrKind::kInt, AttrValue(int64_t(0))}},
               .type_relation = split_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_split_attrs(split_attrs(attrs)); },
               .doc = "splits x along axis into a tuple",
               .symbolic_shapes = true});
  register_op({.name = "strided_slice",
               .num_inputs = 1,
               .attrs = {{"begin", AttrKind::kInts, AttrValue()},
                         {"end", AttrKind::kDims, AttrValue()},
                         {"strides", AttrKind::kInts, AttrValue(), true},
                         {"axes", AttrKind::kInts, AttrValue(), true},
                         {"slice_mode", AttrKind::kString, AttrValue(std::string("end"))}},
               .type_relation = strided_slice_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { check_strided_slice_attrs(strided_slice_attrs(attrs)); },
               .doc = "x[begin:end:strides] on the given axes",
               .movement = DataMovement::kIndexed,
               .symbolic_shapes = true});
  register_op({.name = "take",
               .num_inputs = 2,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(), true},
                         {"mode", AttrKind::kString, AttrValue(std::string("clip"))}},
               .type_relation = take_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = [](const AttrsNode& attrs) { take_attrs(attrs); },  // the reader checks mode
               .doc = "gathers elements of data at indices along axis (flattened when None)",
               .symbolic_shapes = true});
  register_op({.name = "broadcast_to",
               .num_inputs = 1,
               .attrs = {{"shape", AttrKind::kDims, AttrValue()}},
               .type_relation = broadcast_to_relation,
               .pattern = OpPattern::kBroadcast,
               .check_attrs = [](const AttrsNode& attrs) { check_broadcast_to_attrs(broadcast_to_attrs(attrs)); },
               .doc = "x broadcast to shape",
               .movement = DataMovement::kIndexed,
               .symbolic_shapes = true});
}

}  // namespace switchyard
