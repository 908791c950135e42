// InferType: an iterative, memoized walk that types and rebuilds every node.
#include "transform/infer_type.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "analysis/well_formed.h"
#include "ir/with_fields.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

// The node's current type object when it already equals the inferred one, so
// that with_fields sees no change and an already typed node is kept.
const Type& keep_equal(const Type& current, const Type& inferred) {
  return type_equal(current, inferred) ? current : inferred;
}

std::string callee_name(const Expr& callee) {
  if (auto* g = as<GlobalVarNode>(callee)) return "@" + g->name;
  if (auto* v = as<VarNode>(callee)) return "%" + v->name_hint;
  if (is<FunctionNode>(callee)) return "the function literal";
  return std::string("the callee (a ") + expr_kind_name(callee->kind()) + ")";
}

std::string count_of(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The walk keeps an explicit stack of frames; each frame's `stage` says how
// many of its children have been handed out. The stack is always the path
// from the root to the current node, so an error for a node without a span
// can name its nearest enclosing node that has one.
//
// A finished node pushes its typed form on `results_`, where its parent finds
// the results of its children, last ones on top. Only nodes reachable along
// several edges (reference count above one), variables and module functions
// are memoized: a node held by a single parent is reached exactly once, and
// keeping the memo small keeps long chains fast.
class TypeInferrer {
 public:
  explicit TypeInferrer(const IRModule* mod, TypeDefects* defects = nullptr) : mod_(mod), defects_(defects) {}

  Expr infer(const Expr& root) {
    auto it = memo_.find(root.get());
    if (it != memo_.end()) return it->second;
    stack_.push_back({root.get(), 0, 0, true});
    run();
    Expr typed = std::move(results_.back());
    results_.pop_back();
    return typed;
  }

  // The module function `name`, typed (the globals it calls are typed first).
  Function infer_global(const std::string& name) {
    auto it = globals_.find(name);
    if (it != globals_.end()) return it->second;
    push_global(name, mod_->lookup(name));
    run();
    return globals_.at(name);
  }

 private:
  struct Frame {
    const ExprNode* node;
    uint32_t stage;
    uint32_t global : 31;  // for a module function's root: 1 + its index in in_progress_; else 0
    uint32_t shared : 1;   // reachable along several edges: memoize the result
  };

  void run() {
    while (!stack_.empty()) {
      const ExprNode* n = stack_.back().node;
      switch (n->kind()) {
        case ExprKind::kVar: step_var(static_cast<const VarNode*>(n)); break;
        case ExprKind::kConstant: step_constant(static_cast<const ConstantNode*>(n)); break;
        case ExprKind::kCall: step_call(static_cast<const CallNode*>(n)); break;
        case ExprKind::kFunction: step_function(static_cast<const FunctionNode*>(n)); break;
        case ExprKind::kLet: step_let(static_cast<const LetNode*>(n)); break;
        case ExprKind::kIf: step_if(static_cast<const IfNode*>(n)); break;
        case ExprKind::kTuple: step_tuple(static_cast<const TupleNode*>(n)); break;
        case ExprKind::kTupleGetItem: step_tuple_get_item(static_cast<const TupleGetItemNode*>(n)); break;
        case ExprKind::kGlobalVar: step_global_var(static_cast<const GlobalVarNode*>(n)); break;
        case ExprKind::kOp: {
          const auto* op = static_cast<const OpNode*>(n);
          fail(op, "operator '" + op->name + "' is used as a value; an operator can only be called");
        }
      }
    }
  }

  // Pushes `child`, or its result when already typed; true when a frame was
  // pushed (the current frame's references are then stale).
  bool descend(const Expr& child) {
    // A node with a single reference has a single parent: it cannot have
    // been typed yet, so only shared nodes and variables need a lookup.
    bool shared = child->use_count() > 1;
    if (shared || child->kind() == ExprKind::kVar) {
      auto it = memo_.find(child.get());
      if (it != memo_.end()) {
        results_.push_back(it->second);
        return false;
      }
    }
    stack_.push_back({child.get(), 0, 0, shared});
    return true;
  }

  // Hands out children [stage, count) in order; true when one was pushed.
  template <typename ChildAt>
  bool descend_children(size_t count, ChildAt&& child_at) {
    while (stack_.back().stage < count) {
      const Expr& child = child_at(stack_.back().stage++);
      if (descend(child)) return true;
    }
    return false;
  }

  // The typed forms of the current node's last `count` children, in order.
  std::vector<Expr> take_results(size_t count) {
    std::vector<Expr> out(std::make_move_iterator(results_.end() - long(count)), std::make_move_iterator(results_.end()));
    results_.resize(results_.size() - count);
    return out;
  }

  Expr take_result() {
    Expr out = std::move(results_.back());
    results_.pop_back();
    return out;
  }

  const Expr& bound(const Var& var) const { return memo_.at(var.get()); }

  static const ExprNode* node_of(const ExprNode* n) { return n; }
  template <typename T>
  static const ExprNode* node_of(const Ref<T>& n) { return n.get(); }

  // The type `node` is rebuilt with (keep_equal), noting a missing or
  // different checked type for find_type_defects.
  template <typename N>
  const Type& checked(const N& node, const Type& inferred) {
    const Type& current = node_of(node)->checked_type();
    if (defects_ && !type_equal(current, inferred)) {
      std::optional<TypeDefect>& slot = current ? defects_->first_mistyped : defects_->first_untyped;
      if (!slot) slot = TypeDefect{Expr(node_of(node)), current, inferred};
    }
    return keep_equal(current, inferred);
  }

  // Records the result of the frame on top and pops it.
  void finish(Expr result) {
    Frame top = stack_.back();
    stack_.pop_back();
    if (top.global) {  // a module function: its callers look it up by name
      globals_[in_progress_.back()] = downcast<FunctionNode>(result);
      in_progress_.pop_back();
      memo_.emplace(top.node, std::move(result));
      return;
    }
    if (top.shared || top.node->kind() == ExprKind::kVar) memo_.emplace(top.node, result);
    results_.push_back(std::move(result));
  }

  void push_global(const std::string& name, const Function& fn) {
    auto it = memo_.find(fn.get());
    if (it != memo_.end()) {  // the same function node was typed already
      globals_[name] = downcast<FunctionNode>(it->second);
      return;
    }
    in_progress_.push_back(name);
    stack_.push_back({fn.get(), 0, uint32_t(in_progress_.size()), true});
  }

  void bind_var(const Var& var, const Type& type) {
    if (memo_.count(var.get())) return;
    memo_.emplace(var.get(), with_fields(var, {.checked_type = checked(var, type)}));
  }

  Span span_near(const ExprNode* offender) const {
    if (offender && offender->span().defined()) return offender->span();
    for (size_t i = stack_.size(); i-- > 0;) {
      if (stack_[i].node->span().defined()) return stack_[i].node->span();
      if (stack_[i].global) break;  // a callee's node is not the caller's fault
    }
    return Span();
  }

  [[noreturn]] void fail(const ExprNode* offender, const std::string& message) const {
    throw Error(ErrorKind::kType, message, span_near(offender));
  }

  void step_var(const VarNode* v) {
    if (!v->type_annotation)
      fail(v, "variable %" + v->name_hint + " has no type: it has no annotation and no let binds it before this use");
    finish(with_fields(Var(v), {.checked_type = checked(v, v->type_annotation)}));
  }

  void step_constant(const ConstantNode* c) {
    finish(with_fields(Constant(c), {.checked_type = checked(c, c->tensor_type())}));
  }

  void step_global_var(const GlobalVarNode* g) {
    auto it = globals_.find(g->name);
    if (it == globals_.end()) {
      auto cycle = std::find(in_progress_.begin(), in_progress_.end(), g->name);
      if (cycle != in_progress_.end()) {
        std::string chain;
        for (auto i = cycle; i != in_progress_.end(); ++i) chain += "@" + *i + " -> ";
        fail(g, "@" + g->name + " is called recursively (" + chain + "@" + g->name +
                    "); recursive global functions are not supported");
      }
      if (!mod_) fail(g, "@" + g->name + " is not defined (no module was given to look it up in)");
      const Function* fn = mod_->find(g->name);
      if (!fn) fail(g, "@" + g->name + " is not defined in the module");
      push_global(g->name, *fn);  // this frame resumes once the callee is typed
      return;
    }
    finish(with_fields(GlobalVar(g), {.checked_type = checked(g, it->second->checked_type())}));
  }

  void step_call(const CallNode* c) {
    const OpNode* op = as<OpNode>(c->op);
    // The callee first, then the arguments; an operator is skipped (its
    // call is what gets a type).
    size_t first = op ? 1 : 0;
    if (descend_children(c->args.size() + 1 - first, [&](size_t i) -> const Expr& {
          size_t k = i + first;
          return k == 0 ? c->op : c->args[k - 1];
        }))
      return;
    std::vector<Expr> args = take_results(c->args.size());
    std::vector<Type> arg_types;
    arg_types.reserve(args.size());
    for (const Expr& a : args) arg_types.push_back(a->checked_type());
    if (op) {
      finish(type_op_call(c, *op, std::move(args), arg_types));
      return;
    }
    Expr callee = take_result();
    const FuncTypeNode* fn = as_func(callee->checked_type());
    if (!fn)
      fail(c, "cannot call " + callee_name(c->op) + ": it has type " + type_to_string(callee->checked_type()) +
                  ", not a function type");
    if (fn->params.size() != args.size())
      fail(c, callee_name(c->op) + " takes " + count_of(fn->params.size(), "argument") + " (" +
                  type_to_string(callee->checked_type()) + ") but the call passes " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      if (!type_equal(fn->params[i], arg_types[i]))
        fail(c->args[i].get(), "argument " + std::to_string(i) + " of the call to " + callee_name(c->op) +
                                   " has type " + type_to_string(arg_types[i]) + " but the parameter expects " +
                                   type_to_string(fn->params[i]));
    finish(with_fields(Call(c), {.op = callee,
                                 .args = std::move(args),
                                 .checked_type = checked(c, fn->ret)}));
  }

  Expr type_op_call(const CallNode* c, const OpNode& op, std::vector<Expr> args, const std::vector<Type>& arg_types) {
    const OpDef& def = *op.def;
    if (def.num_inputs >= 0 && args.size() != size_t(def.num_inputs))
      fail(c, "'" + op.name + "' expects " + count_of(size_t(def.num_inputs), "argument") + ", got " +
                  std::to_string(args.size()));
    // A call built without the registry's constructor may lack normalized attributes.
    Attrs attrs = c->attrs;
    if (!attrs || attrs->entries().size() != def.attrs.size()) {
      try {
        attrs = normalize_attrs(def, attrs ? attrs->entries() : std::vector<std::pair<std::string, AttrValue>>{});
      } catch (const Error& e) {
        fail(c, e.message());
      }
    }
    if (!def.type_relation) fail(c, "operator '" + op.name + "' has no type relation");
    Type type;
    try {
      type = call_type_relation(def, arg_types, *attrs);
    } catch (const Error& e) {
      fail(c, e.message());
    } catch (const std::exception& e) {
      fail(c, "'" + op.name + "' has malformed attributes: " + e.what());
    }
    return with_fields(Call(c), {.args = std::move(args), .attrs = attrs,
                                 .checked_type = checked(c, type)});
  }

  std::string function_name(const FunctionNode* f) const {
    const Frame& top = stack_.back();
    if (top.node == f && top.global) return "@" + in_progress_[top.global - 1];
    return "the function";
  }

  void step_function(const FunctionNode* f) {
    if (stack_.back().stage == 0) {
      for (const Var& p : f->params) {
        if (!p->type_annotation)
          fail(p.get(), "parameter %" + p->name_hint + " of " + function_name(f) + " has no type annotation");
        bind_var(p, p->type_annotation);
      }
      stack_.back().stage = 1;
      if (descend(f->body)) return;
    }
    std::vector<Var> params;
    std::vector<Type> param_types;
    for (const Var& p : f->params) {
      params.push_back(downcast<VarNode>(bound(p)));
      param_types.push_back(params.back()->checked_type());
    }
    Expr body = take_result();
    if (f->ret_type && !type_equal(f->ret_type, body->checked_type()))
      fail(f, function_name(f) + " is declared to return " + type_to_string(f->ret_type) + " but its body has type " +
                  type_to_string(body->checked_type()));
    const Type& ret = f->ret_type ? f->ret_type : body->checked_type();
    Type type = func_type(std::move(param_types), ret);
    finish(with_fields(Function(f), {.params = std::move(params),
                                     .body = body,
                                     .ret_type = ret,
                                     .checked_type = checked(f, type)}));
  }

  void step_let(const LetNode* l) {
    const Var& var = l->var;
    if (stack_.back().stage == 0) {
      stack_.back().stage = 1;
      // An annotated variable is bound before its value, so a function value
      // may refer to itself.
      if (var->type_annotation) bind_var(var, var->type_annotation);
      if (descend(l->value)) return;
    }
    if (stack_.back().stage == 1) {
      stack_.back().stage = 2;
      const Type& value_type = results_.back()->checked_type();
      if (!var->type_annotation) bind_var(var, value_type);
      else if (!type_equal(var->type_annotation, value_type))
        fail(l, "let %" + var->name_hint + " is annotated " + type_to_string(var->type_annotation) +
                    " but its value has type " + type_to_string(value_type));
      if (descend(l->body)) return;
    }
    Expr body = take_result();
    Expr value = take_result();
    finish(with_fields(Let(l), {.var = downcast<VarNode>(bound(var)),
                                .value = std::move(value),
                                .body = body,
                                .checked_type = checked(l, body->checked_type())}));
  }

  void step_if(const IfNode* n) {
    if (descend_children(3, [&](size_t i) -> const Expr& {
          return i == 0 ? n->cond : i == 1 ? n->then_branch : n->else_branch;
        }))
      return;
    std::vector<Expr> children = take_results(3);
    const Expr& cond = children[0];
    const Expr& then_branch = children[1];
    const Expr& else_branch = children[2];
    const TensorTypeNode* cond_type = as_tensor(cond->checked_type());
    if (!cond_type || cond_type->ndim() != 0 || cond_type->dtype != DType::kBool)
      fail(n->cond.get(), "the condition of 'if' must be a bool scalar (Tensor[(), bool]), got " +
                              type_to_string(cond->checked_type()));
    if (!type_equal(then_branch->checked_type(), else_branch->checked_type()))
      fail(n, "the branches of 'if' have different types: then " + type_to_string(then_branch->checked_type()) +
                  ", else " + type_to_string(else_branch->checked_type()));
    finish(with_fields(If(n), {.cond = cond,
                               .then_branch = then_branch,
                               .else_branch = else_branch,
                               .checked_type = checked(n, then_branch->checked_type())}));
  }

  void step_tuple(const TupleNode* t) {
    if (descend_children(t->fields.size(), [&](size_t i) -> const Expr& { return t->fields[i]; })) return;
    std::vector<Expr> fields = take_results(t->fields.size());
    std::vector<Type> types;
    for (const Expr& f : fields) types.push_back(f->checked_type());
    Type type = tuple_type(std::move(types));
    finish(with_fields(Tuple(t), {.fields = std::move(fields), .checked_type = checked(t, type)}));
  }

  void step_tuple_get_item(const TupleGetItemNode* t) {
    if (stack_.back().stage == 0) {
      stack_.back().stage = 1;
      if (descend(t->tuple)) return;
    }
    Expr tuple = take_result();
    const TupleTypeNode* type = as_tuple(tuple->checked_type());
    if (!type)
      fail(t, "cannot take field " + std::to_string(t->index) + " of a value of type " +
                  type_to_string(tuple->checked_type()) + ": it is not a tuple");
    if (t->index < 0 || size_t(t->index) >= type->fields.size())
      fail(t, "tuple index " + std::to_string(t->index) + " is out of range for a tuple of " +
                  count_of(type->fields.size(), "field") + " " + type_to_string(tuple->checked_type()));
    finish(with_fields(TupleGetItem(t), {.tuple = tuple,
                                         .checked_type = checked(t, type->fields[size_t(t->index)])}));
  }

  const IRModule* mod_;
  TypeDefects* defects_;
  std::vector<Frame> stack_;
  std::vector<Expr> results_;
  std::unordered_map<const ExprNode*, Expr> memo_;
  std::vector<std::string> in_progress_;                // module functions being typed, callers first
  std::unordered_map<std::string, Function> globals_;  // typed module functions
};

}  // namespace

IRModule infer_type(const IRModule& mod) {
  require_scoping(mod);
  TypeInferrer inferrer(&mod);
  IRModule out = mod;
  for (const auto& [name, fn] : mod.functions()) out.add(name, inferrer.infer_global(name));
  return out;
}

TypeDefects find_type_defects(const IRModule& mod) {
  TypeDefects defects;
  TypeInferrer inferrer(&mod, &defects);
  for (const auto& [name, fn] : mod.functions()) inferrer.infer_global(name);
  return defects;
}

Expr infer_expr_type(const Expr& e, const IRModule* mod) {
  TypeInferrer inferrer(mod);
  return inferrer.infer(e);
}

}  // namespace switchyard
