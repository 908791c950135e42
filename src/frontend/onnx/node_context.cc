// The converter's view of one ONNX node (see node_context.h).
#include "frontend/onnx/node_context.h"

#include <algorithm>

#include "frontend/onnx/onnx_tensor.h"
#include "interp/kernel_registry.h"
#include "interp/value.h"
#include "op/registry.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

using sy_onnx::AttributeProto;

// Folding may grow a value this much before it is left to the backend (a
// broadcast of a scalar stays a broadcast instead of becoming a big weight).
constexpr int64_t kFoldGrowthLimit = 1 << 16;

const char* attr_type_name(int type) {
  switch (type) {
    case AttributeProto::FLOAT: return "float";
    case AttributeProto::INT: return "int";
    case AttributeProto::STRING: return "string";
    case AttributeProto::TENSOR: return "tensor";
    case AttributeProto::FLOATS: return "floats";
    case AttributeProto::INTS: return "ints";
    case AttributeProto::GRAPH: return "graph";
    default: return "another type";
  }
}

// A constant, or a tuple of constants, as an interpreter value.
std::optional<Value> known_value(const Expr& e) {
  if (const ConstantNode* c = as<ConstantNode>(e)) return Value::make_tensor(c->data, VirtualDevice::unconstrained());
  if (const TupleNode* t = as<TupleNode>(e)) {
    std::vector<Value> fields;
    for (const Expr& f : t->fields) {
      std::optional<Value> v = known_value(f);
      if (!v) return std::nullopt;
      fields.push_back(*v);
    }
    return Value::make_tuple(std::move(fields));
  }
  return std::nullopt;
}

// The elements of a static type; INT64_MAX for a symbolic one, so it is never folded.
int64_t type_numel(const Type& t) {
  if (const TensorTypeNode* tensor = as_tensor(t))
    return tensor->is_static() ? tensor->numel() : std::numeric_limits<int64_t>::max();
  int64_t n = 0;
  if (const TupleTypeNode* tuple = as_tuple(t))
    for (const Type& f : tuple->fields) {
      int64_t part = type_numel(f);
      if (part == std::numeric_limits<int64_t>::max()) return part;
      n += part;
    }
  return n;
}

int64_t value_numel(const Value& v) {
  if (v.is_tensor()) return v.tensor.numel();
  int64_t n = 0;
  for (const Value& f : v.fields) n += value_numel(f);
  return n;
}

}  // namespace

const TensorTypeNode& tensor_type_of(const Expr& e) {
  const TensorTypeNode* t = as_tensor(e->checked_type());
  if (!t) throw Error(ErrorKind::kParse, "expected a tensor, got " + type_to_string(e->checked_type()), e->span());
  return *t;
}

const std::vector<int64_t>& static_shape_of(const Expr& e) {
  const TensorTypeNode& t = tensor_type_of(e);
  if (!t.is_static())
    for (const DimExpr& d : t.dims)
      if (!d.is_constant())
        throw Error(ErrorKind::kType, "a value of type " + clipped_text(type_to_string(e->checked_type())) +
                                          " has symbolic dimension '" + dim_to_string(d) +
                                          "', which this operator does not take yet (fix it with --input-shape)");
  return t.shape;
}

NodeContext::NodeContext(const sy_onnx::NodeProto& node, Span span, std::vector<Expr> inputs, int opset,
                         int op_version, const std::string& model_dir)
    : node_(node),
      span_(std::move(span)),
      inputs_(std::move(inputs)),
      opset_(opset),
      op_version_(op_version),
      model_dir_(model_dir) {
  outputs_.resize(size_t(node.output_size()));
  read_inputs_.resize(inputs_.size(), false);
}

bool NodeContext::has_input(size_t i) const {
  if (i >= inputs_.size()) return false;
  read_inputs_[i] = true;
  return bool(inputs_[i]);
}

std::vector<size_t> NodeContext::unread_inputs() const {
  std::vector<size_t> unread;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] && !read_inputs_[i]) unread.push_back(i);
  return unread;
}

std::string quoted_name(const std::string& name) { return "'" + clipped_text(name) + "'"; }

void NodeContext::fail(const std::string& message) const {
  std::string name = node_.name().empty() ? std::string("(unnamed)") : quoted_name(node_.name());
  throw Error(ErrorKind::kParse, "node " + name + " (" + clipped_text(node_.op_type()) + "): " + message, span_);
}

const Expr& NodeContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  if (is_shape_value(i)) {
    const std::vector<DimExpr>& elements = shape_values_->values.at(inputs_[i].get()).second;
    fail("input " + std::to_string(i) + " (" + quoted_name(node_.input(int(i))) + ") is a shape computed from symbolic " +
         "dimensions " + clipped_text(dims_to_string(elements)) + ", known only at run time; " +
         clipped_text(node_.op_type()) + " with symbolic shapes is not supported yet (fix the dimensions with "
         "--input-shape)");
  }
  return inputs_[i];
}

void NodeContext::refuse_symbolic_inputs() const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorTypeNode* t = inputs_[i] ? as_tensor(inputs_[i]->checked_type()) : nullptr;
    if (!t || t->is_static()) continue;
    for (const DimExpr& d : t->dims)
      if (!d.is_constant())
        fail("input " + std::to_string(i) + " has symbolic dimension '" + dim_to_string(d) + "'; " +
             clipped_text(node_.op_type()) +
             " with symbolic shapes is not supported yet (fix the dimension with --input-shape)");
  }
}

bool NodeContext::is_shape_value(size_t i) const {
  return i < inputs_.size() && inputs_[i] && shape_values_ && shape_values_->values.count(inputs_[i].get());
}

std::vector<int64_t> NodeContext::value_shape(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  const TensorTypeNode* t = as_tensor(inputs_[i]->checked_type());
  if (!t) fail("input " + std::to_string(i) + " is not a tensor");
  return t->is_static() ? t->shape : std::vector<int64_t>(size_t(t->ndim()), -1);
}

std::optional<std::vector<DimExpr>> NodeContext::shape_value_input(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (is_shape_value(i)) return shape_values_->values.at(inputs_[i].get()).second;
  const NDArray* known = constant_input(i);
  if (!known || !dtype_is_int(known->dtype()) || known->shape().size() > 1) return std::nullopt;
  std::vector<DimExpr> elements;
  for (int64_t v : constant_ints(i, "shape")) elements.emplace_back(v);
  return elements;
}

Expr NodeContext::shape_value(const std::vector<DimExpr>& elements, const std::vector<int64_t>& shape) {
  bool known = std::all_of(elements.begin(), elements.end(), [](const DimExpr& d) { return d.is_constant(); });
  if (known || !shape_values_) {
    NDArray value(DType::kInt64, shape);
    for (size_t k = 0; k < elements.size(); ++k) {
      if (!elements[k].is_constant())
        fail("the shape " + clipped_text(dims_to_string(elements)) + " is symbolic, and this importer keeps no shape values");
      value.as<int64_t>()[k] = *elements[k].constant();
    }
    return constant(std::move(value));
  }
  Type type = tensor_type(shape, DType::kInt64);
  Expr placeholder = make_var("shape_value", type, {.span = span_, .checked_type = type});
  shape_values_->values[placeholder.get()] = {placeholder, elements};
  return placeholder;
}

const TensorTypeNode& NodeContext::input_type(size_t i) const {
  const TensorTypeNode* t = as_tensor(input(i)->checked_type());
  if (!t) fail("input " + std::to_string(i) + " is not a tensor");
  return *t;
}

const std::vector<int64_t>& NodeContext::input_shape(size_t i) const {
  const TensorTypeNode& t = input_type(i);
  if (!t.is_static())
    for (const DimExpr& d : t.dims)
      if (!d.is_constant())
        fail("input " + std::to_string(i) + " has symbolic dimension '" + dim_to_string(d) + "'; " +
             clipped_text(node_.op_type()) +
             " with symbolic shapes is not supported yet (fix the dimension with --input-shape)");
  return t.shape;
}

const NDArray* NodeContext::constant_input(size_t i) const {
  if (!has_input(i)) return nullptr;
  const ConstantNode* c = as<ConstantNode>(inputs_[i]);
  return c ? &c->data : nullptr;
}

const NDArray& NodeContext::require_constant(size_t i, const std::string& role) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " (the " + role + ") is required");
  if (is_shape_value(i)) input(i);  // refused, naming its symbolic dimensions
  const NDArray* value = constant_input(i);
  if (!value)
    fail("input " + std::to_string(i) + " ('" + node_.input(int(i)) + "', the " + role +
         ") must be known at import: it is computed from the model's inputs, and Switchyard compiles static "
         "shapes only");
  return *value;
}

std::vector<int64_t> NodeContext::constant_ints(size_t i, const std::string& role) const {
  const NDArray& a = require_constant(i, role);
  if (!dtype_is_int(a.dtype())) fail("the " + role + " must be integers, got " + dtype_name(a.dtype()));
  std::vector<int64_t> values(size_t(a.numel()));
  if (a.dtype() == DType::kInt64) {  // exact beyond 2^53
    std::copy(a.as<int64_t>(), a.as<int64_t>() + a.numel(), values.begin());
    return values;
  }
  // The other integer dtypes are exact in double; only uint64 can exceed int64.
  constexpr double kInt64End = 9223372036854775808.0;  // 2^63
  for (int64_t k = 0; k < a.numel(); ++k) {
    double v = a.get_as_double(k);
    if (v >= kInt64End) fail("the " + role + " holds a value beyond int64 (element " + std::to_string(k) + ")");
    values[size_t(k)] = int64_t(v);
  }
  return values;
}

std::vector<double> NodeContext::constant_floats(size_t i, const std::string& role) const {
  const NDArray& a = require_constant(i, role);
  std::vector<double> values(size_t(a.numel()));
  for (int64_t k = 0; k < a.numel(); ++k) values[size_t(k)] = a.get_as_double(k);
  return values;
}

const AttributeProto* NodeContext::find_attr(const std::string& name) const {
  read_attrs_.insert(name);
  for (const AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& NodeContext::require_attr(const std::string& name, int type) const {
  const AttributeProto* a = find_attr(name);
  if (!a) fail("attribute '" + name + "' is required");
  if (a->type() != type && a->type() != AttributeProto::UNDEFINED)
    fail("attribute '" + name + "' must be of type " + attr_type_name(type) + ", got " + attr_type_name(a->type()));
  if (!a->ref_attr_name().empty()) fail("attribute '" + name + "' refers to a function attribute (not supported)");
  return *a;
}

bool NodeContext::has_attr(const std::string& name) const { return find_attr(name) != nullptr; }

int64_t NodeContext::attr_int(const std::string& name, std::optional<int64_t> fallback) const {
  if (fallback && !has_attr(name)) return *fallback;
  return require_attr(name, AttributeProto::INT).i();
}

float NodeContext::attr_float(const std::string& name, std::optional<float> fallback) const {
  if (fallback && !has_attr(name)) return *fallback;
  return require_attr(name, AttributeProto::FLOAT).f();
}

std::string NodeContext::attr_string(const std::string& name, std::optional<std::string> fallback) const {
  if (fallback && !has_attr(name)) return *fallback;
  return require_attr(name, AttributeProto::STRING).s();
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name,
                                            std::optional<std::vector<int64_t>> fallback) const {
  if (fallback && !has_attr(name)) return *fallback;
  const AttributeProto& a = require_attr(name, AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}

std::vector<float> NodeContext::attr_floats(const std::string& name) const {
  const AttributeProto& a = require_attr(name, AttributeProto::FLOATS);
  return {a.floats().begin(), a.floats().end()};
}

NDArray NodeContext::attr_tensor(const std::string& name) const {
  const AttributeProto& a = require_attr(name, AttributeProto::TENSOR);
  try {
    return tensor_from_onnx(a.t(), model_dir_);
  } catch (const Error& e) {
    fail("attribute '" + name + "': " + e.message());
  }
}

const sy_onnx::GraphProto& NodeContext::attr_graph(const std::string& name) const {
  return require_attr(name, AttributeProto::GRAPH).g();
}

std::vector<std::string> NodeContext::unread_attrs() const {
  std::vector<std::string> unread;
  for (const AttributeProto& a : node_.attribute())
    if (!read_attrs_.count(a.name())) unread.push_back(a.name());
  return unread;
}

Expr NodeContext::call(const std::string& op, std::vector<Expr> args,
                       std::vector<std::pair<std::string, AttrValue>> attrs) {
  const OpDef* def = find_op_def(op);
  if (!def) fail("no IR operator '" + op + "'");
  Attrs normalized;
  Type type;
  try {
    normalized = normalize_attrs(*def, std::move(attrs));
    std::vector<Type> arg_types;
    for (const Expr& a : args) arg_types.push_back(a->checked_type());
    type = call_type_relation(*def, arg_types, *normalized);
  } catch (const Error& e) {
    fail(e.message());
  }
  // Fold when every argument is known and the result stays small.
  std::vector<Value> values;
  int64_t input_elements = 0;
  for (const Expr& a : args) {
    std::optional<Value> v = known_value(a);
    if (!v) break;
    input_elements += value_numel(*v);
    values.push_back(std::move(*v));
  }
  const InterpKernelDef* kernel = find_interp_kernel(op);
  if (values.size() == args.size() && kernel &&
      type_numel(type) <= std::max<int64_t>(input_elements, kFoldGrowthLimit)) {
    std::vector<NDArray> results;
    try {
      results = kernel->kernel(values, *normalized);
    } catch (const Error& e) {
      fail(e.message());
    }
    if (!kernel->returns_tuple) return make_constant(results.at(0), {.span = span_});
    std::vector<Expr> fields;
    for (NDArray& r : results) fields.push_back(make_constant(std::move(r), {.span = span_}));
    return tuple(std::move(fields));
  }
  return make_call(op_get(op), std::move(args), normalized, {.span = span_, .checked_type = type});
}

Expr NodeContext::constant(NDArray value) { return make_constant(std::move(value), {.span = span_}); }

Expr NodeContext::scalar(double value, DType dtype) {
  NDArray a(dtype, {});
  a.set_from_double(0, value);
  return constant(std::move(a));
}

Expr NodeContext::tuple(std::vector<Expr> fields) {
  std::vector<Type> types;
  for (const Expr& f : fields) types.push_back(f->checked_type());
  return make_tuple(std::move(fields), {.span = span_, .checked_type = tuple_type(std::move(types))});
}

Expr NodeContext::tuple_item(const Expr& t, int index) {
  if (const TupleNode* node = as<TupleNode>(t)) return node->fields.at(size_t(index));
  const TupleTypeNode* type = as_tuple(t->checked_type());
  return make_tuple_get_item(t, index, {.span = span_, .checked_type = type->fields.at(size_t(index))});
}

void NodeContext::set_output(size_t i, Expr value) {
  if (i >= outputs_.size()) return;  // the model does not name this output
  outputs_[i] = std::move(value);
}

}  // namespace switchyard
