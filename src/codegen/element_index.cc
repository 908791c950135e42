// Index maps of generated element loops: offsets, coordinates, broadcasting
// and the injective operators, as kernel IR index expressions over loop
// variables.
#include "codegen/element_index.h"

#include <algorithm>

#include "kernel_ir/hash.h"
#include "op/handles.h"
#include "op/movement_attrs.h"
#include "op/norm_attrs.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"
#include "support/error.h"

namespace switchyard {

namespace ki = kernel_ir;

IndexAt IndexAt::at_offset(ki::Expr offset) { return {std::move(offset), {}, false}; }

IndexAt IndexAt::at_coords(std::vector<ki::Expr> coords) { return {nullptr, std::move(coords), true}; }

IndexAt IndexAt::at(ki::Expr offset, std::vector<ki::Expr> coords) {
  return {std::move(offset), std::move(coords), true};
}

bool IndexAt::operator==(const IndexAt& other) const {
  if (bool(offset) != bool(other.offset) || (offset && !ki::equal(offset, other.offset))) return false;
  // An offset identifies the element; coordinates matter only without one.
  if (offset) return true;
  if (coords.size() != other.coords.size()) return false;
  for (size_t d = 0; d < coords.size(); ++d)
    if (!ki::equal(coords[d], other.coords[d])) return false;
  return true;
}

size_t IndexAt::hash() const {
  if (offset) return offset->hash;
  size_t h = coords.size();
  for (const ki::Expr& c : coords) h = ki::hash_mix(h, c->hash);
  return h;
}

ki::Expr offset_of(const IndexAt& index, const std::vector<int64_t>& shape) {
  if (index.offset) return index.offset;
  ki::Expr out;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && !ki::is_index(index.coords[d], 0)) {
      ki::Expr term = ki::mul(index.coords[d], stride);
      out = out ? ki::add(term, out) : term;
    }
    stride *= shape[d];
  }
  return out ? out : ki::index(0);
}

std::vector<ki::Expr> coordinates_of(const IndexAt& index, const std::vector<int64_t>& shape, bool* divided) {
  if (index.has_coords) return index.coords;
  std::vector<ki::Expr> coords(shape.size(), ki::index(0));
  bool outer_varies = false;  // a dimension before d has extent > 1
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t stride = 1;
    for (size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
    if (shape[d] == 1) continue;
    ki::Expr c = index.offset;
    if (stride != 1) c = ki::binary(ki::BinaryOp::kDiv, c, ki::index(stride));
    if (outer_varies) c = ki::binary(ki::BinaryOp::kMod, c, ki::index(shape[d]));
    if (c != index.offset && divided) *divided = true;
    coords[d] = c;
    outer_varies = true;
  }
  return coords;
}

IndexAt broadcast_index(const IndexAt& index, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& operand_shape, bool* divided) {
  if (operand_shape == shape) return index;
  int64_t count = 1;
  for (int64_t d : operand_shape) count *= d;
  if (count == 1) return IndexAt::at_offset(ki::index(0));
  std::vector<ki::Expr> coords = coordinates_of(index, shape, divided);
  size_t lead = shape.size() - operand_shape.size();
  std::vector<ki::Expr> out(operand_shape.size(), ki::index(0));
  for (size_t d = 0; d < operand_shape.size(); ++d)
    if (operand_shape[d] != 1) out[d] = coords[lead + d];
  return IndexAt::at_coords(std::move(out));
}

namespace {

IndexAt transpose_index(const CallNode& call, const IndexAt& index, bool* divided) {
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  std::vector<int64_t> perm = transpose_permutation(int64_t(in_shape.size()), *call.attrs, ops::transpose()->name);
  std::vector<ki::Expr> out = coordinates_of(index, shape_of(Expr(&call)), divided);
  std::vector<ki::Expr> in(in_shape.size());
  for (size_t i = 0; i < perm.size(); ++i) in[size_t(perm[i])] = out[i];
  return IndexAt::at_coords(std::move(in));
}

IndexAt strided_slice_index(const CallNode& call, const IndexAt& index, bool* divided) {
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  std::vector<SliceAxis> axes = strided_slice_axes(in_shape, *call.attrs, ops::strided_slice()->name);
  bool identity = true;
  for (size_t d = 0; d < axes.size(); ++d) identity = identity && axes[d].begin == 0 && axes[d].stride == 1;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  if (identity && out_shape == in_shape) return index;
  std::vector<ki::Expr> out = coordinates_of(index, out_shape, divided);
  std::vector<ki::Expr> in(in_shape.size());
  for (size_t d = 0; d < axes.size(); ++d) in[d] = ki::add(ki::mul(out[d], axes[d].stride), axes[d].begin);
  return IndexAt::at_coords(std::move(in));
}

// A reshape splits and merges runs of consecutive dimensions (groups whose
// extents multiply to the same count on both sides). Given coordinates, it
// maps each group on its own, so that splitting a dimension into heads
// (a strided slice's columns into 4 x 64) needs no division, and merging
// heads back divides within the group only. The row-major offset, the same
// on both sides, goes along for readers that need no coordinates.
IndexAt reshape_index(const CallNode& call, const IndexAt& index, bool* divided) {
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  if (!index.has_coords) return IndexAt::at_offset(offset_of(index, out_shape));
  std::vector<ki::Expr> in(in_shape.size(), ki::index(0));
  size_t i = 0, j = 0;
  while (i < in_shape.size() || j < out_shape.size()) {
    const size_t in_begin = i, out_begin = j;
    int64_t in_count = i < in_shape.size() ? in_shape[i++] : 1;
    int64_t out_count = j < out_shape.size() ? out_shape[j++] : 1;
    while (in_count != out_count) {
      if (in_count < out_count && i < in_shape.size())
        in_count *= in_shape[i++];
      else if (out_count < in_count && j < out_shape.size())
        out_count *= out_shape[j++];
      else  // extents that never meet (a zero-sized tensor): go by the offset
        return IndexAt::at_offset(offset_of(index, out_shape));
    }
    std::vector<int64_t> group_out(out_shape.begin() + long(out_begin), out_shape.begin() + long(j));
    std::vector<ki::Expr> group_coords(index.coords.begin() + long(out_begin), index.coords.begin() + long(j));
    ki::Expr offset = offset_of(IndexAt::at_coords(std::move(group_coords)), group_out);
    std::vector<int64_t> group_in(in_shape.begin() + long(in_begin), in_shape.begin() + long(i));
    std::vector<ki::Expr> coords = coordinates_of(IndexAt::at_offset(offset), group_in, divided);
    std::copy(coords.begin(), coords.end(), in.begin() + long(in_begin));
  }
  return IndexAt::at(offset_of(index, out_shape), std::move(in));
}

// expand_dims and squeeze keep the row-major order: an offset passes through;
// coordinates drop or gain the unit dimensions.
IndexAt expand_dims_index(const CallNode& call, const IndexAt& index) {
  if (!index.has_coords) return index;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  const ExpandDimsAttrs expand = expand_dims_attrs(*call.attrs);
  int64_t axis = normalize_axis(expand.axis, int64_t(out_shape.size()), ops::expand_dims()->name);
  int64_t count = expand.num_newaxis;
  std::vector<ki::Expr> in;
  for (int64_t d = 0; d < int64_t(index.coords.size()); ++d)
    if (d < axis || d >= axis + count) in.push_back(index.coords[size_t(d)]);
  return index.offset ? IndexAt::at(index.offset, std::move(in)) : IndexAt::at_coords(std::move(in));
}

IndexAt squeeze_index(const CallNode& call, const IndexAt& index) {
  if (!index.has_coords) return index;
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  int64_t rank = int64_t(in_shape.size());
  std::vector<bool> dropped(in_shape.size(), false);
  const std::optional<std::vector<int64_t>> axes = squeeze_attrs(*call.attrs).axes;
  if (!axes) {
    for (size_t d = 0; d < in_shape.size(); ++d) dropped[d] = in_shape[d] == 1;
  } else {
    for (int64_t a : *axes) dropped[size_t(normalize_axis(a, rank, ops::squeeze()->name))] = true;
  }
  std::vector<ki::Expr> in;
  size_t next = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) in.push_back(dropped[d] ? ki::index(0) : index.coords[next++]);
  return index.offset ? IndexAt::at(index.offset, std::move(in)) : IndexAt::at_coords(std::move(in));
}

}  // namespace

IndexAt argument_index(const CallNode& call, size_t arg, const IndexAt& index, bool* divided) {
  const OpNode* op = as<OpNode>(call.op);
  const std::string& name = op->name;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  if (op == ops::bias_add()) {
    if (arg == 0) return index;
    int64_t axis = normalize_axis(norm_attrs(*call.attrs).axis, int64_t(out_shape.size()), name);
    return IndexAt::at_coords({coordinates_of(index, out_shape, divided)[size_t(axis)]});
  }
  switch (op->def->pattern) {
    case OpPattern::kElementwise: return index;
    case OpPattern::kBroadcast: return broadcast_index(index, out_shape, shape_of(call.args[arg]), divided);
    default: break;
  }
  if (op == ops::reshape()) return reshape_index(call, index, divided);
  if (op == ops::expand_dims()) return expand_dims_index(call, index);
  if (op == ops::squeeze()) return squeeze_index(call, index);
  if (op == ops::transpose()) return transpose_index(call, index, divided);
  if (op == ops::strided_slice()) return strided_slice_index(call, index, divided);
  throw Error(ErrorKind::kBackend, "no CPU kernel for operator '" + name + "'", call.span());
}

const std::vector<int64_t>& shape_of(const Expr& e) {
  const TensorTypeNode* t = as_tensor(e->checked_type());
  if (!t)
    throw Error(ErrorKind::kBackend,
                std::string("CPU code generation needs a typed tensor here, got ") +
                    (e->checked_type() ? type_to_string(e->checked_type())
                                       : "an untyped " + std::string(expr_kind_name(e->kind()))),
                e->span());
  return t->shape;
}

DType dtype_of(const Expr& e) {
  shape_of(e);
  return as_tensor(e->checked_type())->dtype;
}

}  // namespace switchyard
