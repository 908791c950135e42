// The element emitter: an explicit work list evaluates operator trees at
// element indices, emitting one `const` local per operator; each operator's
// expression comes from render_cpu_scalar (cpu_scalar.cc).
#include "backend/cpu_element_emitter.h"

#include <limits>

#include "backend/cpu_scalar.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "support/error.h"

namespace switchyard {

std::string constant_literal(const ConstantNode& constant) {
  const NDArray& data = constant.data;
  DType dtype = data.dtype();
  switch (dtype) {
    case DType::kInt64: {
      int64_t v = data.as<int64_t>()[0];
      return v == std::numeric_limits<int64_t>::min() ? "INT64_MIN" : "int64_t(" + std::to_string(v) + ")";
    }
    case DType::kInt32: return "int32_t(" + std::to_string(data.as<int32_t>()[0]) + ")";
    default: return literal(dtype, data.get_as_double(0));
  }
}

ElementEmitter::ElementEmitter(CodeWriter& out, std::set<CpuHelper>& helpers, int& counter)
    : out_(out), helpers_(helpers), counter_(counter), scopes_(1) {}

void ElementEmitter::bind_buffer(const ExprNode* node, std::string pointer) { buffers_[node] = std::move(pointer); }

void ElementEmitter::bind_value(const ExprNode* node, const ElementIndex& index, std::string value) {
  bound_values_[std::to_string(reinterpret_cast<uintptr_t>(node)) + index.key()] = std::move(value);
  buffers_.erase(node);
  bound_nodes_.insert(node);
}

std::string ElementEmitter::fresh(const std::string& base) {
  return identifier(base) + "_" + std::to_string(counter_++);
}

std::string ElementEmitter::emit(const Expr& node, const ElementIndex& index) {
  schedule(node, index);
  while (!work_.empty()) {
    std::function<void()> task = std::move(work_.back());
    work_.pop_back();
    task();
  }
  return pop();
}

void ElementEmitter::schedule(const Expr& node, const ElementIndex& index) {
  work_.push_back([this, node, index] { evaluate(node, index); });
}

std::string ElementEmitter::pop() {
  std::string v = std::move(results_.back());
  results_.pop_back();
  return v;
}

const std::string* ElementEmitter::lookup(const std::string& key) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(key); found != it->end()) return &found->second;
  return nullptr;
}

void ElementEmitter::remember(const std::string& key, const std::string& value) { scopes_.back()[key] = value; }

void ElementEmitter::evaluate(const Expr& node, const ElementIndex& index) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(node.get())) + index.key();
  if (const std::string* known = lookup(key)) return results_.push_back(*known);
  if (auto bound = bound_values_.find(key); bound != bound_values_.end()) return results_.push_back(bound->second);
  if (bound_nodes_.count(node.get()))
    throw Error(ErrorKind::kBackend, "an anchor's result is read at another element than its own in its epilogue",
                node->span());
  if (auto buffer = buffers_.find(node.get()); buffer != buffers_.end()) {
    DType dtype = dtype_of(node);
    const VarNode* var = as<VarNode>(node);
    std::string name = fresh(var ? var->name_hint : "value");
    std::string element = buffer->second + "[" + offset_of(index, shape_of(node)) + "]";
    out_.line("const " + compute_type(dtype) + " " + name + " = " + load_element(dtype, element, &helpers_) + ";");
    remember(key, name);
    return results_.push_back(name);
  }
  if (const ConstantNode* constant = as<ConstantNode>(node)) {
    if (constant->data.ndim() != 0)
      throw Error(ErrorKind::kBackend, "a tensor constant inside a primitive function must be one of its parameters",
                  node->span());
    return results_.push_back(constant_literal(*constant));
  }
  const CallNode* call = as<CallNode>(node);
  if (call && as<OpNode>(call->op)) return evaluate_call(call, index, key);
  throw Error(ErrorKind::kBackend,
              std::string("CPU code generation cannot inline a ") + expr_kind_name(node->kind()) + " into a loop",
              node->span());
}

namespace {

bool is_index_only(const std::string& op) {
  return op == "reshape" || op == "expand_dims" || op == "squeeze" || op == "transpose" || op == "strided_slice" ||
         op == "broadcast_to";
}

}  // namespace

void ElementEmitter::evaluate_call(const CallNode* call, const ElementIndex& index, const std::string& key) {
  const OpNode* op = as<OpNode>(call->op);
  if (op->name == "concatenate") return evaluate_concatenate(call, index, key);
  if (op->name == "take") return evaluate_take(call, index, key);
  OpPattern pattern = op->def->pattern;
  bool inlinable = pattern == OpPattern::kElementwise || pattern == OpPattern::kBroadcast ||
                   (pattern == OpPattern::kInjective && op->name != "split");
  if (!inlinable)
    throw Error(ErrorKind::kBackend,
                "operator '" + op->name + "' (" + op_pattern_name(pattern) +
                    ") cannot be inlined into an element loop: a CPU kernel holds one anchor or reduction, "
                    "and only element-wise, broadcast and injective operators around it",
                call->span());
  std::vector<ElementIndex> indices;
  for (size_t i = 0; i < call->args.size(); ++i) indices.push_back(argument_index(*call, i, index, &cost_));
  size_t arity = call->args.size();
  work_.push_back([this, call, key, arity] { combine(call, key, arity); });
  for (size_t i = arity; i-- > 0;) schedule(call->args[i], indices[i]);
}

void ElementEmitter::combine(const CallNode* call, const std::string& key, size_t arity) {
  std::vector<std::string> values(arity);
  for (size_t i = arity; i-- > 0;) values[i] = pop();
  const std::string& op = as<OpNode>(call->op)->name;
  if (is_index_only(op)) {
    remember(key, values[0]);
    return results_.push_back(values[0]);
  }
  ScalarCall scalar{as<OpNode>(call->op), call->attrs, {}, dtype_of(Expr(call)), call->span()};
  for (const Expr& arg : call->args) scalar.arg_dtypes.push_back(dtype_of(arg));
  std::string name = fresh(op);
  out_.line("const " + compute_type(scalar.result_dtype) + " " + name + " = " +
            render_cpu_scalar(scalar, values, helpers_) + ";  // " +
            op + (call->span().defined() ? " at " + call->span().to_string() : ""));
  remember(key, name);
  results_.push_back(name);
}

void ElementEmitter::evaluate_concatenate(const CallNode* call, const ElementIndex& index, const std::string& key) {
  const TupleNode* tuple = as<TupleNode>(call->args[0]);
  if (!tuple) throw Error(ErrorKind::kBackend, "concatenate expects a tuple of tensors here", call->span());
  const std::vector<int64_t>& out_shape = shape_of(Expr(call));
  int64_t axis = normalize_axis(call->attrs->get_int("axis"), int64_t(out_shape.size()), "concatenate");
  std::vector<std::string> coords = coordinates_of(index, out_shape, &cost_);
  std::string along = coords[size_t(axis)];
  struct Part {
    Expr field;
    int64_t begin, end;
  };
  std::vector<Part> parts;
  int64_t begin = 0;
  for (const Expr& field : tuple->fields) {
    int64_t extent = shape_of(field)[size_t(axis)];
    if (extent > 0) parts.push_back({field, begin, begin + extent});
    begin += extent;
  }
  auto part_index = [&](const Part& p) {
    std::vector<std::string> c = coords;
    c[size_t(axis)] = plus(along, -p.begin);
    return ElementIndex::at_coords(std::move(c));
  };
  std::string name = fresh("concatenate");
  std::string type = compute_type(dtype_of(Expr(call)));
  // The tasks in execution order: each part is computed only in its branch,
  // where its reads are in bounds.
  std::vector<std::function<void()>> tasks;
  tasks.push_back([this, name, type, call] {
    out_.line(type + " " + name + ";  // concatenate" +
              (call->span().defined() ? " at " + call->span().to_string() : ""));
  });
  for (size_t k = 0; k < parts.size(); ++k) {
    std::string condition =
        k + 1 == parts.size() ? "else" : "if (" + along + " < " + std::to_string(parts[k].end) + ")";
    if (k > 0 && k + 1 < parts.size()) condition = "else " + condition;
    tasks.push_back([this, k, condition] {
      if (k == 0) out_.open(condition);
      else out_.next(condition);
      scopes_.emplace_back();
    });
    tasks.push_back([this, field = parts[k].field, i = part_index(parts[k])] { schedule(field, i); });
    tasks.push_back([this, name] {
      out_.line(name + " = " + pop() + ";");
      scopes_.pop_back();
    });
  }
  tasks.push_back([this, name, key, single = parts.size() == 1] {
    if (!single) out_.close();
    remember(key, name);
    results_.push_back(name);
  });
  if (parts.size() == 1) {  // no branches needed: the one part, unconditionally
    tasks[1] = [this] { scopes_.emplace_back(); };
  }
  for (auto it = tasks.rbegin(); it != tasks.rend(); ++it) work_.push_back(std::move(*it));
}

void ElementEmitter::evaluate_take(const CallNode* call, const ElementIndex& index, const std::string& key) {
  const Expr& data = call->args[0];
  const Expr& indices = call->args[1];
  const std::vector<int64_t>& data_shape = shape_of(data);
  const std::vector<int64_t>& out_shape = shape_of(Expr(call));
  size_t index_rank = shape_of(indices).size();
  bool flattened = call->attrs->is_none("axis");
  int64_t axis = flattened ? 0 : normalize_axis(call->attrs->get_int("axis"), int64_t(data_shape.size()), "take");
  int64_t extent = 1;
  if (flattened)
    for (int64_t d : data_shape) extent *= d;
  else
    extent = data_shape[size_t(axis)];
  if (extent == 0) throw Error(ErrorKind::kBackend, "take from an axis of size 0", call->span());
  std::vector<std::string> coords;
  ElementIndex indices_index = index;
  if (!flattened) {
    coords = coordinates_of(index, out_shape, &cost_);
    std::vector<std::string> inner(coords.begin() + axis, coords.begin() + axis + int64_t(index_rank));
    indices_index = inner.empty() ? ElementIndex::at_offset("0") : ElementIndex::at_coords(inner);
  }
  std::string mode = call->attrs->get_string("mode");
  work_.push_back([=, this] {
    std::string raw = "int64_t(" + pop() + ")";
    std::string name = fresh("take_index");
    std::string last = std::to_string(extent - 1);
    std::string position;
    if (mode == "wrap") {
      position = "(" + raw + " % " + std::to_string(extent) + " + " + std::to_string(extent) + ") % " +
                 std::to_string(extent);
    } else if (mode == "fast") {  // out of range is an error, as in the interpreter
      helpers_.insert(CpuHelper::kCheckedIndex);
      position = "sy_checked_index(" + raw + ", " + std::to_string(extent) + ", " + kFaultsArgument + ")";
    } else {
      position = raw + " < 0 ? 0 : (" + raw + " > " + last + " ? " + last + " : " + raw + ")";
    }
    out_.line("const int64_t " + name + " = " + position + ";  // take (mode \"" + mode + "\")" +
              (call->span().defined() ? " at " + call->span().to_string() : ""));
    ElementIndex data_index = ElementIndex::at_offset(name);
    if (!flattened) {
      std::vector<std::string> c(coords.begin(), coords.begin() + axis);
      c.push_back(name);
      c.insert(c.end(), coords.begin() + axis + int64_t(index_rank), coords.end());
      data_index = ElementIndex::at_coords(std::move(c));
    }
    work_.push_back([this, key] {
      std::string value = pop();
      remember(key, value);
      results_.push_back(value);
    });
    schedule(data, data_index);
  });
  schedule(indices, indices_index);
}

}  // namespace switchyard
