// Injective data-movement operators: reshape, transpose, expand_dims, squeeze,
// concatenate, split, strided_slice, take, broadcast_to.
#include <algorithm>
#include <stdexcept>

#include "op/builtin_ops.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

Type reshape_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "reshape");
  return tensor_type(reshape_target(x.shape, attrs.get_ints("newshape"), "reshape"), x.dtype);
}

void reshape_check(const AttrsNode& attrs) {
  const std::vector<int64_t>& newshape = attrs.get_ints("newshape");
  if (std::count(newshape.begin(), newshape.end(), -1) > 1)
    type_fail("reshape", "newshape " + ints_str(newshape) + " has more than one -1 (at most one dimension is inferred)");
  for (int64_t d : newshape)
    if (d < -1)
      type_fail("reshape", "newshape " + ints_str(newshape) + " has " + std::to_string(d) +
                               "; entries are sizes, 0 (copy the input dimension) or -1 (infer)");
}

Type transpose_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "transpose");
  std::vector<int64_t> shape;
  for (int64_t d : transpose_permutation(x.ndim(), attrs, "transpose")) shape.push_back(x.shape[size_t(d)]);
  return tensor_type(std::move(shape), x.dtype);
}

// The axes must be a permutation of 0..n-1 (negative entries count from the
// end); n is the list's own length, so this needs no type.
void transpose_check(const AttrsNode& attrs) {
  if (attrs.is_none("axes")) return;
  const std::vector<int64_t>& axes = attrs.get_ints("axes");
  int64_t n = int64_t(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (int64_t a : axes) {
    int64_t normalized = a < 0 ? a + n : a;
    if (normalized < 0 || normalized >= n || seen[size_t(normalized)])
      type_fail("transpose", "axes " + ints_str(axes) + " is not a permutation of 0.." + std::to_string(n - 1));
    seen[size_t(normalized)] = true;
  }
}

Type expand_dims_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "expand_dims";
  const TensorTypeNode& x = expect_tensor(args, 0, op);
  int64_t axis = attrs.get_int("axis"), rank = x.ndim();
  if (axis < -rank - 1 || axis > rank)
    type_fail(op, "axis " + std::to_string(axis) + " is out of range for x " + shape_str(x.shape) + " (allowed " +
                      std::to_string(-rank - 1) + ".." + std::to_string(rank) + ")");
  if (axis < 0) axis += rank + 1;
  // Checked before the shape is built: num_newaxis alone could ask for gigabytes of dimensions.
  if (attrs.get_int("num_newaxis") > int64_t(kMaxTensorRank) - rank)
    type_fail(op, "num_newaxis " + std::to_string(attrs.get_int("num_newaxis")) + " would give x " +
                      shape_str(x.shape) + " more than " + std::to_string(kMaxTensorRank) + " dimensions");
  std::vector<int64_t> shape = x.shape;
  shape.insert(shape.begin() + axis, size_t(attrs.get_int("num_newaxis")), 1);
  return tensor_type(std::move(shape), x.dtype);
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
  int64_t axis = normalize_axis(attrs.get_int("axis"), first.ndim(), op);
  std::vector<int64_t> shape = first.shape;
  for (size_t i = 1; i < fields.size(); ++i) {
    const TensorTypeNode& t = *fields[i];
    if (t.dtype != first.dtype)
      type_fail(op, "field " + std::to_string(i) + " is " + dtype_name(t.dtype) + " but field 0 is " +
                        dtype_name(first.dtype) + "; dtypes must match");
    if (t.ndim() != first.ndim())
      type_fail(op, "field " + std::to_string(i) + " " + shape_str(t.shape) + " has rank " + std::to_string(t.ndim()) +
                        " but field 0 " + shape_str(first.shape) + " has rank " + std::to_string(first.ndim()));
    for (int d = 0; d < t.ndim(); ++d)
      if (d != axis && t.shape[size_t(d)] != first.shape[size_t(d)])
        type_fail(op, "field " + std::to_string(i) + " " + shape_str(t.shape) + " differs from field 0 " +
                          shape_str(first.shape) + " in dimension " + std::to_string(d) + " (only axis " +
                          std::to_string(axis) + " may differ)");
    if (__builtin_add_overflow(shape[size_t(axis)], t.shape[size_t(axis)], &shape[size_t(axis)]))
      type_fail(op, "the concatenated dimension " + std::to_string(axis) + " overflows int64 at field " +
                        std::to_string(i));
  }
  return tensor_type(std::move(shape), first.dtype);
}

Type split_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "split";
  const TensorTypeNode& x = expect_min_rank(args, 0, 1, op, "x");
  int64_t axis = normalize_axis(attrs.get_int("axis"), x.ndim(), op);
  const AttrValue* sections = attrs.find("indices_or_sections");
  if (!sections) throw std::logic_error("attribute 'indices_or_sections' is missing");
  std::vector<int64_t> sizes;
  try {
    sizes = split_sizes(x.shape[size_t(axis)], *sections, op);
  } catch (const Error& e) {
    throw Error(ErrorKind::kType, e.message() + " (dimension " + std::to_string(axis) + " of x " + shape_str(x.shape) + ")");
  }
  std::vector<Type> fields;
  for (int64_t size : sizes) {
    std::vector<int64_t> shape = x.shape;
    shape[size_t(axis)] = size;
    fields.push_back(tensor_type(std::move(shape), x.dtype));
  }
  return tuple_type(std::move(fields));
}

void split_check(const AttrsNode& attrs) {
  const AttrValue* value = attrs.find("indices_or_sections");
  if (auto* sections = std::get_if<int64_t>(value)) {
    if (*sections <= 0) type_fail("split", "indices_or_sections must be a positive number of sections, got " + std::to_string(*sections));
    return;
  }
  const auto& indices = std::get<std::vector<int64_t>>(*value);
  int64_t previous = 0;
  for (int64_t index : indices) {
    if (index <= previous)
      type_fail("split", "indices_or_sections " + ints_str(indices) + " must be positive and strictly ascending");
    previous = index;
  }
}

Type strided_slice_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& x = expect_tensor(args, 0, "strided_slice");
  std::vector<int64_t> shape;
  for (const SliceAxis& axis : strided_slice_axes(x.shape, attrs, "strided_slice")) shape.push_back(axis.length);
  return tensor_type(std::move(shape), x.dtype);
}

void strided_slice_check(const AttrsNode& attrs) {
  const std::string op = "strided_slice";
  const std::vector<int64_t>& begin = attrs.get_ints("begin");
  const std::vector<int64_t>& end = attrs.get_ints("end");
  check_one_of(op, "slice_mode", attrs.get_string("slice_mode"), {"end", "size"});
  if (begin.size() != end.size())
    type_fail(op, "begin " + ints_str(begin) + " and end " + ints_str(end) + " must have the same length");
  if (!attrs.is_none("axes") && attrs.get_ints("axes").size() != begin.size())
    type_fail(op, "axes " + ints_str(attrs.get_ints("axes")) + " must name one dimension per begin entry " +
                      ints_str(begin));
  if (attrs.is_none("strides")) return;
  const std::vector<int64_t>& strides = attrs.get_ints("strides");
  if (strides.size() > begin.size())
    type_fail(op, "strides " + ints_str(strides) + " has more entries than begin " + ints_str(begin));
  for (int64_t s : strides) {
    if (s == 0) type_fail(op, "strides " + ints_str(strides) + " has a zero stride");
    if (s != 1 && attrs.get_string("slice_mode") == "size")
      type_fail(op, "strides " + ints_str(strides) + " must be 1 when slice_mode is \"size\"");
  }
}

Type take_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "take";
  const TensorTypeNode& data = expect_tensor(args, 0, op);
  const TensorTypeNode& indices = expect_tensor(args, 1, op);
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64)
    type_fail(op, "argument 1 (indices) must be int32 or int64, got " + std::string(dtype_name(indices.dtype)));
  if (attrs.is_none("axis")) return tensor_type(indices.shape, data.dtype);
  if (data.ndim() == 0) type_fail(op, "data is a scalar; take along an axis needs at least 1 dimension");
  int64_t axis = normalize_axis(attrs.get_int("axis"), data.ndim(), op);
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  return tensor_type(std::move(shape), data.dtype);
}

Type broadcast_to_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "broadcast_to";
  const TensorTypeNode& x = expect_tensor(args, 0, op);
  const std::vector<int64_t>& target = attrs.get_ints("shape");
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
               .attrs = {{"newshape", AttrKind::kInts, AttrValue()}},
               .type_relation = reshape_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = reshape_check,
               .doc = "x with a new shape of the same size (0 copies a dimension, -1 infers one)",
               .movement = DataMovement::kView});
  register_op({.name = "transpose",
               .num_inputs = 1,
               .attrs = {{"axes", AttrKind::kInts, AttrValue(), true}},
               .type_relation = transpose_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = transpose_check,
               .doc = "permutes dimensions (default: reverses them)",
               .movement = DataMovement::kIndexed});
  register_op({.name = "expand_dims",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue()}, {"num_newaxis", AttrKind::kInt, AttrValue(int64_t(1))}},
               .type_relation = expand_dims_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     if (attrs.get_int("num_newaxis") < 0)
                       type_fail("expand_dims", "num_newaxis must not be negative, got " +
                                                    std::to_string(attrs.get_int("num_newaxis")));
                   },
               .doc = "inserts num_newaxis dimensions of size 1 at axis",
               .movement = DataMovement::kView});
  register_op({.name = "squeeze",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInts, AttrValue(), true}},
               .type_relation = squeeze_relation,
               .pattern = OpPattern::kInjective,
               .doc = "drops dimensions of size 1",
               .movement = DataMovement::kView});
  register_op({.name = "concatenate",
               .num_inputs = 1,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t(0))}},
               .type_relation = concatenate_relation,
               .pattern = OpPattern::kInjective,
               .doc = "joins a tuple of tensors along axis"});
  register_op({.name = "split",
               .num_inputs = 1,
               .attrs = {{"indices_or_sections", AttrKind::kIntOrInts, AttrValue()},
                         {"axis", AttrKind::kInt, AttrValue(int64_t(0))}},
               .type_relation = split_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = split_check,
               .doc = "splits x along axis into a tuple"});
  register_op({.name = "strided_slice",
               .num_inputs = 1,
               .attrs = {{"begin", AttrKind::kInts, AttrValue()},
                         {"end", AttrKind::kInts, AttrValue()},
                         {"strides", AttrKind::kInts, AttrValue(), true},
                         {"axes", AttrKind::kInts, AttrValue(), true},
                         {"slice_mode", AttrKind::kString, AttrValue(std::string("end"))}},
               .type_relation = strided_slice_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs = strided_slice_check,
               .doc = "x[begin:end:strides] on the given axes",
               .movement = DataMovement::kIndexed});
  register_op({.name = "take",
               .num_inputs = 2,
               .attrs = {{"axis", AttrKind::kInt, AttrValue(), true},
                         {"mode", AttrKind::kString, AttrValue(std::string("clip"))}},
               .type_relation = take_relation,
               .pattern = OpPattern::kInjective,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     check_one_of("take", "mode", attrs.get_string("mode"), {"clip", "wrap", "fast"});
                   },
               .doc = "gathers elements of data at indices along axis (flattened when None)"});
  register_op({.name = "broadcast_to",
               .num_inputs = 1,
               .attrs = {{"shape", AttrKind::kInts, AttrValue()}},
               .type_relation = broadcast_to_relation,
               .pattern = OpPattern::kBroadcast,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     check_non_negative("broadcast_to", "shape", attrs.get_ints("shape"));
                   },
               .doc = "x broadcast to shape",
               .movement = DataMovement::kIndexed});
}

}  // namespace switchyard
