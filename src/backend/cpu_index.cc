// Index maps of generated element loops: offsets, coordinates, broadcasting
// and the injective operators, as C++ expressions over loop variables.
#include "backend/cpu_index.h"

#include <cctype>

#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"
#include "support/error.h"

namespace switchyard {

ElementIndex ElementIndex::at_offset(std::string offset) {
  ElementIndex i;
  i.offset = std::move(offset);
  return i;
}

ElementIndex ElementIndex::at_coords(std::vector<std::string> coords) {
  ElementIndex i;
  i.coords = std::move(coords);
  i.has_coords = true;
  return i;
}

ElementIndex ElementIndex::at(std::string offset, std::vector<std::string> coords) {
  ElementIndex i = at_coords(std::move(coords));
  i.offset = std::move(offset);
  return i;
}

std::string ElementIndex::key() const {
  if (!offset.empty()) return "[" + offset + "]";
  std::string k = "(";
  for (const std::string& c : coords) k += c + ",";
  return k + ")";
}

std::string parenthesize(const std::string& e) {
  bool number = !e.empty() && std::isdigit(static_cast<unsigned char>(e[0]));
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    bool exponent_sign = number && (c == '+' || c == '-') && i > 0 && e[i - 1] == 'e';
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && !(number && c == '.') && !exponent_sign)
      return "(" + e + ")";
  }
  return e;
}

std::string plus(const std::string& e, int64_t k) {
  if (k == 0) return e;
  if (e == "0") return std::to_string(k);
  return k > 0 ? e + " + " + std::to_string(k) : e + " - " + std::to_string(-k);
}

std::string times(const std::string& e, int64_t k) {
  if (k == 0 || e == "0") return "0";
  if (k == 1) return e;
  return parenthesize(e) + " * " + std::to_string(k);
}

std::string offset_of(const ElementIndex& index, const std::vector<int64_t>& shape) {
  if (!index.offset.empty()) return index.offset;
  std::string out;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && index.coords[d] != "0") {
      std::string term = times(index.coords[d], stride);
      out = out.empty() ? term : term + " + " + out;
    }
    stride *= shape[d];
  }
  return out.empty() ? "0" : out;
}

std::vector<std::string> coordinates_of(const ElementIndex& index, const std::vector<int64_t>& shape,
                                        IndexCost* cost) {
  if (index.has_coords) return index.coords;
  std::vector<std::string> coords(shape.size(), "0");
  bool outer_varies = false;  // a dimension before d has extent > 1
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t stride = 1;
    for (size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
    if (shape[d] != 1) {
      std::string c = index.offset;
      if (stride != 1) c = parenthesize(c) + " / " + std::to_string(stride);
      if (outer_varies) c = parenthesize(c) + " % " + std::to_string(shape[d]);
      if (c != index.offset && cost) cost->divided = true;
      coords[d] = c;
      outer_varies = true;
    }
  }
  return coords;
}

ElementIndex broadcast_index(const ElementIndex& index, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& operand_shape, IndexCost* cost) {
  if (operand_shape == shape) return index;
  int64_t count = 1;
  for (int64_t d : operand_shape) count *= d;
  if (count == 1) return ElementIndex::at_offset("0");
  std::vector<std::string> coords = coordinates_of(index, shape, cost);
  size_t lead = shape.size() - operand_shape.size();
  std::vector<std::string> out(operand_shape.size(), "0");
  for (size_t d = 0; d < operand_shape.size(); ++d)
    if (operand_shape[d] != 1) out[d] = coords[lead + d];
  return ElementIndex::at_coords(std::move(out));
}

namespace {

ElementIndex transpose_index(const CallNode& call, const ElementIndex& index, IndexCost* cost) {
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  std::vector<int64_t> perm = transpose_permutation(int64_t(in_shape.size()), *call.attrs, "transpose");
  std::vector<std::string> out = coordinates_of(index, shape_of(Expr(&call)), cost);
  std::vector<std::string> in(in_shape.size());
  for (size_t i = 0; i < perm.size(); ++i) in[size_t(perm[i])] = out[i];
  return ElementIndex::at_coords(std::move(in));
}

ElementIndex strided_slice_index(const CallNode& call, const ElementIndex& index, IndexCost* cost) {
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  std::vector<SliceAxis> axes = strided_slice_axes(in_shape, *call.attrs, "strided_slice");
  bool identity = true;
  for (size_t d = 0; d < axes.size(); ++d) identity = identity && axes[d].begin == 0 && axes[d].stride == 1;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  if (identity && out_shape == in_shape) return index;
  std::vector<std::string> out = coordinates_of(index, out_shape, cost);
  std::vector<std::string> in(in_shape.size());
  for (size_t d = 0; d < axes.size(); ++d) in[d] = plus(times(out[d], axes[d].stride), axes[d].begin);
  return ElementIndex::at_coords(std::move(in));
}

// expand_dims and squeeze keep the row-major order: an offset passes through;
// coordinates drop or gain the unit dimensions.
ElementIndex expand_dims_index(const CallNode& call, const ElementIndex& index) {
  if (!index.has_coords) return index;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  int64_t axis = normalize_axis(call.attrs->get_int("axis"), int64_t(out_shape.size()), "expand_dims");
  int64_t count = call.attrs->get_int("num_newaxis");
  std::vector<std::string> in;
  for (int64_t d = 0; d < int64_t(index.coords.size()); ++d)
    if (d < axis || d >= axis + count) in.push_back(index.coords[size_t(d)]);
  return ElementIndex::at(index.offset, std::move(in));
}

ElementIndex squeeze_index(const CallNode& call, const ElementIndex& index) {
  if (!index.has_coords) return index;
  const std::vector<int64_t>& in_shape = shape_of(call.args[0]);
  int64_t rank = int64_t(in_shape.size());
  std::vector<bool> dropped(in_shape.size(), false);
  if (call.attrs->is_none("axis")) {
    for (size_t d = 0; d < in_shape.size(); ++d) dropped[d] = in_shape[d] == 1;
  } else {
    for (int64_t a : call.attrs->get_ints("axis")) dropped[size_t(normalize_axis(a, rank, "squeeze"))] = true;
  }
  std::vector<std::string> in;
  size_t next = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) in.push_back(dropped[d] ? "0" : index.coords[next++]);
  return ElementIndex::at(index.offset, std::move(in));
}

}  // namespace

ElementIndex argument_index(const CallNode& call, size_t arg, const ElementIndex& index, IndexCost* cost) {
  const OpNode* op = as<OpNode>(call.op);
  const std::string& name = op->name;
  const std::vector<int64_t>& out_shape = shape_of(Expr(&call));
  if (name == "nn.bias_add") {
    if (arg == 0) return index;
    int64_t axis = normalize_axis(call.attrs->get_int("axis"), int64_t(out_shape.size()), name);
    return ElementIndex::at_coords({coordinates_of(index, out_shape, cost)[size_t(axis)]});
  }
  switch (op->def->pattern) {
    case OpPattern::kElementwise: return index;
    case OpPattern::kBroadcast: return broadcast_index(index, out_shape, shape_of(call.args[arg]), cost);
    default: break;
  }
  if (name == "reshape") return ElementIndex::at_offset(offset_of(index, out_shape));
  if (name == "expand_dims") return expand_dims_index(call, index);
  if (name == "squeeze") return squeeze_index(call, index);
  if (name == "transpose") return transpose_index(call, index, cost);
  if (name == "strided_slice") return strided_slice_index(call, index, cost);
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
