// The reference interpreter: an explicit-stack evaluator per function
// activation, with the activation's memo table doubling as its environment.
#include "interp/evaluate.h"

#include <unordered_map>
#include <unordered_set>

#include "interp/kernel_registry.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"
#include "support/stack_budget.h"

namespace switchyard {

namespace {

// Calls of functions nest natively; this bounds that nesting (runaway
// recursion) well inside an 8 MiB stack.
constexpr int kMaxCallDepth = 1000;

using Bindings = std::unordered_map<const VarNode*, Value>;

// One function activation. `values` holds the value of every node evaluated
// so far in this activation (each node evaluates to one value, since
// variables are bound once), including parameters and let-bound variables,
// so it is also the environment. `captured` holds a closure's free variables.
struct Activation {
  std::unordered_map<const ExprNode*, Value> values;
  const Bindings* captured = nullptr;
};

class Evaluator {
 public:
  explicit Evaluator(const IRModule* mod) : mod_(mod) {}

  Value call_function(const Function& fn, std::vector<Value> args, const Bindings* captured, const Span& span);
  Value run(const Expr& root, Activation& activation);

 private:
  Value leaf_value(const ExprNode* node, const Activation& activation);
  Value lookup_var(const VarNode* var, const Activation& activation) const;
  Value global_function(const GlobalVarNode* global) const;
  Value make_closure(const FunctionNode* fn, const Activation& activation);
  const std::vector<const VarNode*>& free_vars(const FunctionNode* fn);
  Value apply_call(const CallNode* call, const Activation& activation);
  Value apply_op(const CallNode* call, const OpNode* op, std::vector<Value> args);
  Value apply_placement(const CallNode* call, const std::string& op_name, const Value& arg) const;
  const InterpKernelDef* kernel_for(const OpNode* op);

  const IRModule* mod_;
  std::unordered_map<const FunctionNode*, std::vector<const VarNode*>> free_vars_;
  std::unordered_map<const OpNode*, const InterpKernelDef*> kernels_;
  int depth_ = 0;
  StackBudget stack_;
};

std::string var_name(const VarNode* var) { return "%" + var->name_hint; }

Value Evaluator::call_function(const Function& fn, std::vector<Value> args, const Bindings* captured,
                               const Span& span) {
  if (args.size() != fn->params.size())
    throw Error(ErrorKind::kType, "the function takes " + std::to_string(fn->params.size()) + " arguments, got " +
                                      std::to_string(args.size()), span);
  if (depth_ >= kMaxCallDepth || stack_.exhausted())
    throw Error(ErrorKind::kRuntime, "function calls nest too deep (at most " + std::to_string(kMaxCallDepth) +
                                         ", and fewer in sanitizer builds; unbounded recursion?)", span);
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  } guard(depth_);
  Activation activation;
  activation.captured = captured;
  for (size_t i = 0; i < args.size(); ++i) activation.values[fn->params[i].get()] = std::move(args[i]);
  return run(fn->body, activation);
}

Value Evaluator::lookup_var(const VarNode* var, const Activation& activation) const {
  if (auto it = activation.values.find(var); it != activation.values.end()) return it->second;
  if (activation.captured)
    if (auto it = activation.captured->find(var); it != activation.captured->end()) return it->second;
  throw Error(ErrorKind::kUsage, "variable " + var_name(var) + " is not bound here", var->span());
}

Value Evaluator::global_function(const GlobalVarNode* global) const {
  const Function* fn = mod_ ? mod_->find(global->name) : nullptr;
  if (!fn) throw Error(ErrorKind::kUsage, "no global function @" + global->name + " to evaluate", global->span());
  return Value::make_closure(*fn, {});
}

const std::vector<const VarNode*>& Evaluator::free_vars(const FunctionNode* fn) {
  auto it = free_vars_.find(fn);
  if (it != free_vars_.end()) return it->second;
  std::vector<const VarNode*> used;
  std::unordered_set<const VarNode*> bound;
  post_order_visit(Expr(fn), [&](const Expr& e) {
    if (const VarNode* v = as<VarNode>(e)) used.push_back(v);
    if (const FunctionNode* f = as<FunctionNode>(e))
      for (const Var& p : f->params) bound.insert(p.get());
    if (const LetNode* l = as<LetNode>(e)) bound.insert(l->var.get());
  });
  std::vector<const VarNode*> free;
  for (const VarNode* v : used)
    if (!bound.count(v)) free.push_back(v);
  return free_vars_.emplace(fn, std::move(free)).first->second;
}

Value Evaluator::make_closure(const FunctionNode* fn, const Activation& activation) {
  Bindings captured;
  for (const VarNode* v : free_vars(fn)) captured.emplace(v, lookup_var(v, activation));
  return Value::make_closure(Function(fn), std::move(captured));
}

// A node that evaluates without evaluating others first.
Value Evaluator::leaf_value(const ExprNode* node, const Activation& activation) {
  switch (node->kind()) {
    case ExprKind::kVar: return lookup_var(static_cast<const VarNode*>(node), activation);
    case ExprKind::kConstant:
      return Value::make_tensor(static_cast<const ConstantNode*>(node)->data, node->virtual_device());
    case ExprKind::kGlobalVar: return global_function(static_cast<const GlobalVarNode*>(node));
    case ExprKind::kFunction: return make_closure(static_cast<const FunctionNode*>(node), activation);
    default:
      throw Error(ErrorKind::kUsage,
                  "operator '" + static_cast<const OpNode*>(node)->name + "' is used as a value; it can only be called",
                  node->span());
  }
}

const Value& tuple_field(const TupleGetItemNode* item, const Value& tuple) {
  if (!tuple.is_tuple() || item->index < 0 || size_t(item->index) >= tuple.fields.size())
    throw Error(ErrorKind::kType, "cannot take field " + std::to_string(item->index) + " of " + value_summary(tuple),
                item->span());
  return tuple.fields[size_t(item->index)];
}

bool branch_taken(const IfNode* branch, const Value& cond) {
  if (!cond.is_tensor() || cond.tensor.dtype() != DType::kBool || cond.tensor.numel() != 1)
    throw Error(ErrorKind::kType, "the condition of 'if' must be a bool scalar, got " + value_summary(cond),
                branch->cond->span().defined() ? branch->cond->span() : branch->span());
  return cond.tensor.as<uint8_t>()[0] != 0;
}

Value Evaluator::run(const Expr& root, Activation& activation) {
  struct Task {
    const ExprNode* node;
    uint8_t stage;  // how far this node's evaluation has got (per kind, below)
  };
  auto& values = activation.values;
  std::vector<Task> stack{{root.get(), 0}};
  auto push = [&](const Expr& e) {
    if (!values.count(e.get())) stack.push_back({e.get(), 0});
  };
  auto value_of = [&](const Expr& e) -> const Value& { return values.at(e.get()); };
  while (!stack.empty()) {
    size_t top = stack.size() - 1;
    const ExprNode* node = stack[top].node;
    uint8_t stage = stack[top].stage;
    if (stage == 0 && values.count(node)) {
      stack.pop_back();
      continue;
    }
    switch (node->kind()) {
      case ExprKind::kVar:
      case ExprKind::kConstant:
      case ExprKind::kGlobalVar:
      case ExprKind::kOp:
      case ExprKind::kFunction:
        values[node] = leaf_value(node, activation);
        stack.pop_back();
        break;
      case ExprKind::kTuple: {
        auto* tuple = static_cast<const TupleNode*>(node);
        if (stage == 0) {
          stack[top].stage = 1;
          for (auto it = tuple->fields.rbegin(); it != tuple->fields.rend(); ++it) push(*it);
          break;
        }
        std::vector<Value> fields;
        fields.reserve(tuple->fields.size());
        for (const Expr& f : tuple->fields) fields.push_back(value_of(f));
        values[node] = Value::make_tuple(std::move(fields));
        stack.pop_back();
        break;
      }
      case ExprKind::kTupleGetItem: {
        auto* item = static_cast<const TupleGetItemNode*>(node);
        if (stage == 0) {
          stack[top].stage = 1;
          push(item->tuple);
          break;
        }
        values[node] = tuple_field(item, value_of(item->tuple));
        stack.pop_back();
        break;
      }
      case ExprKind::kCall: {
        auto* call = static_cast<const CallNode*>(node);
        if (stage == 0) {
          stack[top].stage = 1;
          for (auto it = call->args.rbegin(); it != call->args.rend(); ++it) push(*it);
          if (!is<OpNode>(call->op) && !is<GlobalVarNode>(call->op)) push(call->op);
          break;
        }
        values[node] = apply_call(call, activation);
        stack.pop_back();
        break;
      }
      case ExprKind::kLet: {
        auto* let = static_cast<const LetNode*>(node);
        if (stage == 0) {
          stack[top].stage = 1;
          push(let->value);
        } else if (stage == 1) {
          values[let->var.get()] = value_of(let->value);
          stack[top].stage = 2;
          push(let->body);
        } else {
          values[node] = value_of(let->body);
          stack.pop_back();
        }
        break;
      }
      case ExprKind::kIf: {
        auto* branch = static_cast<const IfNode*>(node);
        if (stage == 0) {
          stack[top].stage = 1;
          push(branch->cond);
        } else if (stage == 1) {
          bool taken = branch_taken(branch, value_of(branch->cond));
          stack[top].stage = taken ? 2 : 3;
          push(taken ? branch->then_branch : branch->else_branch);
        } else {
          values[node] = value_of(stage == 2 ? branch->then_branch : branch->else_branch);
          stack.pop_back();
        }
        break;
      }
    }
  }
  return values.at(root.get());
}

Value Evaluator::apply_call(const CallNode* call, const Activation& activation) {
  std::vector<Value> args;
  args.reserve(call->args.size());
  for (const Expr& a : call->args) args.push_back(activation.values.at(a.get()));
  if (const OpNode* op = as<OpNode>(call->op)) return apply_op(call, op, std::move(args));
  if (const GlobalVarNode* global = as<GlobalVarNode>(call->op)) {
    Value callee = global_function(global);
    return call_function(callee.closure->function, std::move(args), nullptr, call->span());
  }
  const Value& callee = activation.values.at(call->op.get());
  if (!callee.is_closure())
    throw Error(ErrorKind::kType, "cannot call " + value_summary(callee) + ": it is not a function", call->span());
  // Holds the closure (and so its captured values) for the whole call.
  std::shared_ptr<const Closure> closure = callee.closure;
  return call_function(closure->function, std::move(args), &closure->captured, call->span());
}

const InterpKernelDef* Evaluator::kernel_for(const OpNode* op) {
  auto it = kernels_.find(op);
  if (it != kernels_.end()) return it->second;
  return kernels_[op] = find_interp_kernel(op->name);
}

Value Evaluator::apply_placement(const CallNode* call, const std::string& op_name, const Value& arg) const {
  // The attributes a hand-built call may lack or misspell: an error naming the call, not a crash.
  const bool wish = call->op.get() == on_device_op();
  const VirtualDevice* device = nullptr;
  DeviceCopyAttrs ends;
  try {
    if (!call->attrs) throw Error(ErrorKind::kType, "its device attributes are missing");
    if (wish)
      device = on_device_wish(*call);
    else
      ends = device_copy_attrs(*call);
  } catch (const Error& e) {
    throw Error(ErrorKind::kType, "'" + op_name + "': " + e.message(), call->span());
  } catch (const std::logic_error& e) {
    throw Error(ErrorKind::kType, "'" + op_name + "': " + e.what(), call->span());
  }
  if (wish) return relabel_value(arg, device);
  const VirtualDevice* src = ends.src;
  const VirtualDevice* dst = ends.dst;
  // A copy from where the value does not live means placement went wrong upstream.
  if (arg.is_tensor() || arg.is_tuple())
    for (const Value& t : flatten_tensors(arg))
      if (!VirtualDevice::join(t.device, src))
        throw Error(ErrorKind::kPlacement, "device_copy from " + src->str() + ", but its argument lives on " +
                                               t.device->str(), call->span());
  return relabel_value(arg, dst);
}

Value Evaluator::apply_op(const CallNode* call, const OpNode* op, std::vector<Value> args) {
  const std::string& name = op->name;
  const OpDef* def = op->def;
  if (def && def->num_inputs >= 0 && args.size() != size_t(def->num_inputs))
    throw Error(ErrorKind::kType, "'" + name + "' takes " + std::to_string(def->num_inputs) + " arguments, got " +
                                      std::to_string(args.size()), call->span());
  if (is_placement_op(op)) {
    if (args.size() != 1) throw Error(ErrorKind::kType, "'" + name + "' takes 1 argument", call->span());
    return apply_placement(call, name, args[0]);
  }
  const InterpKernelDef* kernel = kernel_for(op);
  if (!kernel) throw Error(ErrorKind::kUsage, "no reference kernel for operator '" + name + "'", call->span());
  std::vector<NDArray> outputs;
  try {
    // A call built without attributes gets the operator's defaults.
    Attrs attrs = call->attrs ? call->attrs : def ? normalize_attrs(*def, {}) : make_attrs({});
    outputs = kernel->kernel(args, *attrs);
  } catch (const Error& e) {
    throw Error(e.kind(), "'" + name + "': " + e.message(), e.span().defined() ? e.span() : call->span());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kRuntime, "'" + name + "': out of memory", call->span());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kRuntime, "'" + name + "': " + e.what(), call->span());
  }
  const VirtualDevice* device = call->virtual_device();
  if (kernel->returns_tuple) {
    std::vector<Value> fields;
    for (NDArray& o : outputs) fields.push_back(Value::make_tensor(std::move(o), device));
    return Value::make_tuple(std::move(fields));
  }
  if (outputs.size() != 1)
    throw Error(ErrorKind::kRuntime, "'" + name + "': the kernel returned " + std::to_string(outputs.size()) +
                                         " arrays, expected 1", call->span());
  return Value::make_tensor(std::move(outputs[0]), device);
}

// The parameter's declared type (annotation, else the inferred type).
Type param_type(const Var& param) {
  return param->type_annotation ? param->type_annotation : param->checked_type();
}

std::vector<Value> validated_inputs(const Function& fn, const std::string& entry,
                                    const std::map<std::string, NDArray>& inputs) {
  std::string takes;
  for (const Var& p : fn->params) takes += (takes.empty() ? "" : ", ") + p->name_hint;
  for (const auto& [name, array] : inputs) {
    bool known = false;
    for (const Var& p : fn->params) known = known || p->name_hint == name;
    if (!known)
      throw Error(ErrorKind::kUsage, "unknown input '" + name + "': @" + entry + " takes " +
                                         (takes.empty() ? std::string("no inputs") : takes));
  }
  std::vector<Value> args;
  for (const Var& p : fn->params) {
    Type type = param_type(p);
    const TensorTypeNode* tensor = as_tensor(type);
    std::string expected = type ? type_to_string(type) : std::string("a tensor");
    if (type && !tensor)
      throw Error(ErrorKind::kUsage, "parameter '" + p->name_hint + "' of @" + entry + " has type " + expected +
                                         ", which cannot be given as an input array", p->span());
    // Kernels and this check read static shapes: running symbolic types is a later step.
    if (tensor && !tensor->is_static())
      throw Error(ErrorKind::kUsage, "parameter '" + p->name_hint + "' of @" + entry + " has the symbolic type " +
                                         expected + "; the interpreter runs static shapes only yet", p->span());
    auto it = inputs.find(p->name_hint);
    if (it == inputs.end())
      throw Error(ErrorKind::kUsage, "missing input '" + p->name_hint + "' (expected " + expected + ")", p->span());
    const NDArray& array = it->second;
    if (!array.defined())
      throw Error(ErrorKind::kUsage, "input '" + p->name_hint + "' is an undefined array", p->span());
    if (tensor && (tensor->dtype != array.dtype() || tensor->shape != array.shape()))
      throw Error(ErrorKind::kUsage, "input '" + p->name_hint + "': expected " + expected + ", got " +
                                         type_to_string(tensor_type(array.shape(), array.dtype())), p->span());
    args.push_back(Value::make_tensor(array, p->virtual_device()));
  }
  return args;
}

}  // namespace

Value evaluate(const IRModule& mod, const std::map<std::string, NDArray>& inputs, const std::string& entry) {
  const Function& fn = mod.lookup(entry);
  std::vector<Value> args = validated_inputs(fn, entry, inputs);
  Evaluator evaluator(&mod);
  return evaluator.call_function(fn, std::move(args), nullptr, fn->span());
}

Value evaluate_expr(const Expr& closed_expr, const IRModule* mod) {
  Evaluator evaluator(mod);
  Activation activation;
  return evaluator.run(closed_expr, activation);
}

}  // namespace switchyard
