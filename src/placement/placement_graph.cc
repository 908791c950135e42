// Extraction of the placement problem from a typed module, with an explicit
// work list (no native recursion on data depth).
#include "placement/placement_graph.h"

#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

void Domain::leaves(std::vector<ValueId>* out) const {
  visit_depth_first(*this, [out](const Domain& d) {
    if (d.value >= 0) out->push_back(d.value);
  });
}

PlaceId PlacementGraph::add_node(std::string what, Expr node) {
  nodes.push_back(PlaceNode{std::move(what), std::move(node), nullptr, {}});
  return PlaceId(nodes.size() - 1);
}

ValueId PlacementGraph::add_value(PlaceId producer, int64_t bytes, Expr expr) {
  values.push_back(PlaceValue{producer, bytes, std::move(expr), {}});
  return ValueId(values.size() - 1);
}

namespace {

std::string span_text(const Span& s) { return s.defined() ? " at " + s.to_string() : ""; }

class GraphBuilder {
 public:
  GraphBuilder(const IRModule& mod, const CompilationConfig& config) : mod_(mod), config_(config) {}

  PlacementGraph build() {
    // Globals first, so calls can refer to functions defined later.
    for (const auto& [name, fn] : mod_.functions()) globals_[name] = make_function_domain(fn, "@" + name);
    for (const auto& [name, fn] : mod_.functions()) walk(fn);
    return std::move(g_);
  }

 private:
  const VirtualDevice* resolve(const VirtualDevice* wish, const Span& span, const std::string& what) {
    // A layout is no device: it would spread to every value planned with
    // this one. PlanLayouts gives layouts after fusion; none is taken as a wish.
    if (!wish->layout().empty())
      throw Error(ErrorKind::kPlacement,
                  what + " on " + wish->str() + ": a layout is not a placement wish (PlanLayouts chooses layouts " +
                      "after fusion, for values passed between oneDNN primitives)",
                  span);
    const VirtualDevice* vd = config_.resolve(wish);
    if (!vd)
      throw Error(ErrorKind::kPlacement,
                  what + " on " + wish->str() + ", which is not among the build's devices (" +
                      config_.to_string() + ")",
                  span);
    return vd;
  }

  void fix(PlaceId id, const VirtualDevice* wish, const Span& span, const std::string& fact,
           PlacementReason::Kind kind = PlacementReason::Kind::kWish) {
    PlaceNode& n = g_.nodes[id];
    n.fixed = resolve(wish, span, fact);
    n.reason = PlacementReason{kind, fact + " on " + n.fixed->device_name() + span_text(span), span, -1};
  }

  const Type& type_of(const Expr& e) {
    if (!e->checked_type())
      throw Error(ErrorKind::kPlacement, "device planning needs types: run InferType first", e->span());
    return e->checked_type();
  }

  // Values produced by `producer` for every tensor leaf of `type`.
  Domain produce(const Type& type, PlaceId producer, const Expr& expr) {
    return domain_of_type(type, [&](const Type& part) {
      Domain d;
      if (const TensorTypeNode* t = as_tensor(part)) d.value = g_.add_value(producer, t->nbytes(), expr);
      else if (const FuncTypeNode* f = as_func(part)) d.function = fresh_function_domain(*f, expr);
      return d;
    });
  }

  std::shared_ptr<FunctionDomain> fresh_function_domain(const FuncTypeNode& type, const Expr& expr) {
    auto fd = std::make_shared<FunctionDomain>();
    for (size_t i = 0; i < type.params.size(); ++i) {
      if (as_func(type.params[i])) {
        fd->param_nodes.push_back(-1);
        fd->param_domains.push_back(Domain{-1, {}, fresh_function_domain(*as_func(type.params[i]), expr)});
      } else {
        PlaceId p = g_.add_node("parameter " + std::to_string(i) + " of a function value", expr);
        fd->param_nodes.push_back(p);
        fd->param_domains.push_back(produce(type.params[i], p, expr));
      }
    }
    add_result_nodes(fd.get(), type.ret, "result of a function value", expr);
    if (const FuncTypeNode* rf = as_func(type.ret)) fd->result_domain.function = fresh_function_domain(*rf, expr);
    return fd;
  }

  std::shared_ptr<FunctionDomain> make_function_domain(const Function& fn, const std::string& name) {
    auto fd = std::make_shared<FunctionDomain>();
    for (const Var& p : fn->params) {
      const Type& t = p->type_annotation ? p->type_annotation : type_of(p);
      if (const FuncTypeNode* f = as_func(t)) {
        fd->param_nodes.push_back(-1);
        fd->param_domains.push_back(Domain{-1, {}, fresh_function_domain(*f, p)});
      } else {
        PlaceId id = g_.add_node("parameter %" + p->name_hint, p);
        if (!p->virtual_device()->is_fully_unconstrained())
          fix(id, p->virtual_device(), p->span(), "parameter %" + p->name_hint + " arrives");
        g_.place_of[p.get()] = id;
        fd->param_nodes.push_back(id);
        fd->param_domains.push_back(produce(t, id, p));
      }
      g_.domains[p.get()] = fd->param_domains.back();
    }
    const Type& result_type = fn->ret_type ? fn->ret_type : type_of(fn->body);
    add_result_nodes(fd.get(), result_type, "result of " + name, fn);
    // Planning writes a tuple result's common device on its function, or
    // the host where the fields live apart: in a planned module that is a
    // summary, not a wish, and each field stays where its body puts it.
    bool summary = mod_.device_planned() && as_tuple(result_type);
    if (!fn->virtual_device()->is_fully_unconstrained() && !summary)
      for (PlaceId r : fd->result_nodes) fix(r, fn->virtual_device(), fn->span(), "the result of " + name + " is delivered");
    return fd;
  }

  // One result node per tensor leaf of `type`, named by its path
  // ("result of @main.1.0"; a path deeper than eight levels ends in "...").
  void add_result_nodes(FunctionDomain* fd, const Type& type, const std::string& what, const Expr& expr) {
    constexpr size_t kNamedLevels = 8;
    struct Frame {
      const TupleTypeNode* tuple;
      size_t next = 0;
    };
    std::vector<Frame> stack;
    const Type* part = &type;
    while (true) {
      if (part) {
        if (const TupleTypeNode* t = as_tuple(*part)) {
          stack.push_back({t});
        } else if (as_tensor(*part)) {
          std::string name = what;
          for (size_t i = 0; i < stack.size() && i < kNamedLevels; ++i) name += "." + std::to_string(stack[i].next - 1);
          if (stack.size() > kNamedLevels) name += "...";
          fd->result_nodes.push_back(g_.add_node(name, expr));
        }
        part = nullptr;
      }
      if (stack.empty()) return;
      Frame& top = stack.back();
      if (top.next < top.tuple->fields.size()) {
        part = &top.tuple->fields[top.next++];
      } else {
        stack.pop_back();
      }
    }
  }

  // The domain shaped like `type`: leaf(part) for each part that is not a
  // tuple, in order, with tuples built around them. Iterative.
  template <typename Leaf>
  static Domain domain_of_type(const Type& type, Leaf&& leaf) {
    struct Frame {
      const TupleTypeNode* tuple;
      std::vector<Domain> fields;
    };
    std::vector<Frame> stack;
    Domain done;
    const Type* part = &type;
    while (true) {
      if (part) {
        const TupleTypeNode* t = as_tuple(*part);
        if (t) stack.push_back({t, {}});
        else done = leaf(*part);
        part = nullptr;
        if (t) continue;
      } else {
        Frame& top = stack.back();
        if (top.fields.size() < top.tuple->fields.size()) {
          part = &top.tuple->fields[top.fields.size()];
          continue;
        }
        done = Domain();
        done.fields = SharedFields<Domain>(std::move(top.fields));
        stack.pop_back();
      }
      if (stack.empty()) return done;
      stack.back().fields.push_back(std::move(done));
    }
  }

  // Leaf i of `d` is consumed by nodes[i].
  void consume_leafwise(const Domain& d, const std::vector<PlaceId>& nodes) {
    std::vector<ValueId> leaves;
    d.leaves(&leaves);
    for (size_t i = 0; i < leaves.size() && i < nodes.size(); ++i) g_.values[leaves[i]].consumers.push_back(nodes[i]);
  }

  // Values produced leaf by leaf by `nodes` for `type`.
  Domain produce_leafwise(const Type& type, const std::vector<PlaceId>& nodes, size_t* next, const Expr& expr) {
    return domain_of_type(type, [&](const Type& part) {
      Domain d;
      if (const TensorTypeNode* t = as_tensor(part)) d.value = g_.add_value(nodes.at((*next)++), t->nbytes(), expr);
      return d;
    });
  }

  void consume(const Domain& d, PlaceId consumer) {
    std::vector<ValueId> leaves;
    d.leaves(&leaves);
    for (ValueId v : leaves) g_.values[v].consumers.push_back(consumer);
  }

  void tie(PlaceId a, PlaceId b, const std::string& why) {
    if (a >= 0 && b >= 0 && a != b) g_.ties.push_back({a, b, why});
  }

  // Function values flowing into each other share their placement. A work
  // list of domain pairs, so nesting depth costs no stack; fields two
  // domains share hold nothing to tie.
  void unify(const Domain& a, const Domain& b, const std::string& why) {
    std::vector<std::pair<const Domain*, const Domain*>> pending{{&a, &b}};
    while (!pending.empty()) {
      auto [x, y] = pending.back();
      pending.pop_back();
      if (x->function && y->function && x->function != y->function) {
        const FunctionDomain& fx = *x->function;
        const FunctionDomain& fy = *y->function;
        for (size_t i = 0; i < fx.param_nodes.size() && i < fy.param_nodes.size(); ++i) {
          tie(fx.param_nodes[i], fy.param_nodes[i], why);
          pending.push_back({&fx.param_domains[i], &fy.param_domains[i]});
        }
        for (size_t i = 0; i < fx.result_nodes.size() && i < fy.result_nodes.size(); ++i)
          tie(fx.result_nodes[i], fy.result_nodes[i], why);
        pending.push_back({&fx.result_domain, &fy.result_domain});
      }
      if (x->fields.identity() == y->fields.identity()) continue;
      for (size_t i = 0; i < x->fields.size() && i < y->fields.size(); ++i)
        pending.push_back({&x->fields[i], &y->fields[i]});
    }
  }

  // The leaf-producing wish node for an on_device-like boundary.
  Domain wish_boundary(const Expr& at, const Domain& input, const Type& type, const VirtualDevice* device,
                       const std::string& fact) {
    PlaceId id = g_.add_node(fact, at);
    fix(id, device, at->span(), fact);
    consume(input, id);
    g_.place_of[at.get()] = id;
    Domain out = produce(type, id, at);
    if (input.function) out.function = input.function;
    return out;
  }

  enum class Step { kEnter, kExit, kBindLet };
  struct Frame {
    Step step;
    Expr node;
  };

  void walk(const Function& root) {
    std::vector<Frame> stack{{Step::kEnter, root}};
    while (!stack.empty()) {
      Frame f = stack.back();
      stack.pop_back();
      const Expr& e = f.node;
      if (f.step == Step::kEnter) {
        if (g_.domains.count(e.get())) continue;
        enter(e, &stack);
      } else if (f.step == Step::kExit) {
        exit(e);
      } else {
        bind_let(downcast<LetNode>(e));
      }
    }
  }

  void enter(const Expr& e, std::vector<Frame>* stack) {
    auto push_children = [&](const std::vector<Expr>& children) {
      stack->push_back({Step::kExit, e});
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack->push_back({Step::kEnter, *it});
    };
    switch (e->kind()) {
      case ExprKind::kVar:
        // Parameters and let variables get their domain when bound.
        throw Error(ErrorKind::kPlacement,
                    "variable %" + static_cast<const VarNode*>(e.get())->name_hint + " is used outside its scope",
                    e->span());
      case ExprKind::kConstant:
        g_.domains[e.get()] = Domain{g_.add_value(-1, type_nbytes(type_of(e)), e), {}, nullptr};
        return;
      case ExprKind::kGlobalVar: {
        const std::string& name = static_cast<const GlobalVarNode*>(e.get())->name;
        auto it = globals_.find(name);
        if (it == globals_.end()) throw Error(ErrorKind::kPlacement, "undefined global @" + name, e->span());
        g_.domains[e.get()] = Domain{-1, {}, it->second};
        return;
      }
      case ExprKind::kOp:
        g_.domains[e.get()] = Domain{};
        return;
      case ExprKind::kFunction: {
        const FunctionNode* fn = static_cast<const FunctionNode*>(e.get());
        if (!function_domains_.count(e.get())) {
          std::shared_ptr<FunctionDomain> fd;
          for (const auto& [name, gfn] : mod_.functions())
            if (gfn.get() == e.get()) fd = globals_[name];
          if (!fd) fd = make_function_domain(downcast<FunctionNode>(e), "a function literal");
          function_domains_[e.get()] = fd;
        }
        stack->push_back({Step::kExit, e});
        stack->push_back({Step::kEnter, fn->body});
        return;
      }
      case ExprKind::kLet: {
        const LetNode* l = static_cast<const LetNode*>(e.get());
        stack->push_back({Step::kExit, e});
        stack->push_back({Step::kEnter, l->body});
        stack->push_back({Step::kBindLet, e});
        stack->push_back({Step::kEnter, l->value});
        return;
      }
      case ExprKind::kCall: {
        const CallNode* c = static_cast<const CallNode*>(e.get());
        std::vector<Expr> children;
        if (c->op->kind() != ExprKind::kOp) children.push_back(c->op);
        children.insert(children.end(), c->args.begin(), c->args.end());
        push_children(children);
        return;
      }
      case ExprKind::kIf: {
        const IfNode* i = static_cast<const IfNode*>(e.get());
        push_children({i->cond, i->then_branch, i->else_branch});
        return;
      }
      case ExprKind::kTuple:
        push_children(static_cast<const TupleNode*>(e.get())->fields);
        return;
      case ExprKind::kTupleGetItem:
        push_children({static_cast<const TupleGetItemNode*>(e.get())->tuple});
        return;
    }
  }

  void bind_let(const Let& l) {
    Domain d = g_.domains.at(l->value.get());
    // A let variable's device is a wish only where it differs from its value's
    // own (the parser gives the variable the device its value states).
    const VirtualDevice* var_device = l->var->virtual_device();
    if (!var_device->is_fully_unconstrained() && var_device != l->value->virtual_device())
      d = wish_boundary(l->var, d, type_of(l->value), l->var->virtual_device(),
                        "let variable %" + l->var->name_hint + " is wished");
    g_.domains[l->var.get()] = d;
  }

  void exit(const Expr& e) {
    switch (e->kind()) {
      case ExprKind::kFunction: {
        const FunctionNode* fn = static_cast<const FunctionNode*>(e.get());
        const auto& fd = function_domains_.at(e.get());
        const Domain& body = g_.domains.at(fn->body.get());
        consume_leafwise(body, fd->result_nodes);
        unify(body, fd->result_domain, "the function's result");
        g_.domains[e.get()] = Domain{-1, {}, fd};
        return;
      }
      case ExprKind::kLet:
        g_.domains[e.get()] = g_.domains.at(static_cast<const LetNode*>(e.get())->body.get());
        return;
      case ExprKind::kTuple: {
        std::vector<Domain> fields;
        for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields) fields.push_back(g_.domains.at(f.get()));
        Domain d;
        d.fields = SharedFields<Domain>(std::move(fields));
        g_.domains[e.get()] = std::move(d);
        return;
      }
      case ExprKind::kTupleGetItem: {
        const TupleGetItemNode* t = static_cast<const TupleGetItemNode*>(e.get());
        const Domain& whole = g_.domains.at(t->tuple.get());
        if (size_t(t->index) >= whole.fields.size())
          throw Error(ErrorKind::kPlacement, "tuple projection out of range", e->span());
        g_.domains[e.get()] = whole.fields[t->index];
        return;
      }
      case ExprKind::kIf: exit_if(downcast<IfNode>(e)); return;
      case ExprKind::kCall: exit_call(downcast<CallNode>(e)); return;
      case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kGlobalVar: case ExprKind::kOp: return;
    }
  }

  void exit_if(const If& i) {
    PlaceId reader = g_.add_node("if condition", i->cond);
    g_.nodes[reader].fixed = config_.host_device;
    g_.nodes[reader].reason = PlacementReason{PlacementReason::Kind::kHost,
                                              "if conditions are read on the host " +
                                                  config_.host_device->device_name() + span_text(i->span()),
                                              i->span(), -1};
    consume(g_.domains.at(i->cond.get()), reader);
    g_.if_condition[i.get()] = reader;
    PlaceId id = g_.add_node("if", i);
    if (!i->virtual_device()->is_fully_unconstrained()) fix(id, i->virtual_device(), i->span(), "the if is placed");
    g_.place_of[i.get()] = id;
    const Domain& then_d = g_.domains.at(i->then_branch.get());
    const Domain& else_d = g_.domains.at(i->else_branch.get());
    consume(then_d, id);
    consume(else_d, id);
    Domain out = produce(type_of(i), id, i);
    unify(then_d, else_d, "both branches of an if");
    if (then_d.function) out.function = then_d.function;
    g_.domains[i.get()] = std::move(out);
  }

  void exit_call(const Call& c) {
    if (const OpNode* op = as<OpNode>(c->op)) {
      const Domain& arg = g_.domains.at(c->args.at(0).get());
      if (op == on_device_op()) {
        const VirtualDevice* wish = on_device_wish(*c);
        g_.domains[c.get()] = wish_boundary(c, arg, type_of(c), wish, "on_device wishes the value");
        return;
      }
      if (op == device_copy_op()) {
        const DeviceCopyAttrs ends = device_copy_attrs(*c);
        const VirtualDevice* src = ends.src;
        const VirtualDevice* dst = ends.dst;
        PlaceId source = g_.add_node("source of device_copy", c);
        fix(source, src, c->span(), "device_copy reads its input");
        std::vector<ValueId> leaves;
        arg.leaves(&leaves);
        for (ValueId v : leaves)
          if (g_.values[v].producer >= 0)
            tie(g_.values[v].producer, source, "the input of device_copy" + span_text(c->span()) + " must be on its source");
        PlaceId dest = g_.add_node(device_copy_op()->name, c);
        fix(dest, dst, c->span(), "device_copy delivers its result");
        g_.place_of[c.get()] = dest;
        g_.domains[c.get()] = produce(type_of(c), dest, c);
        return;
      }
      PlaceId id = g_.add_node(op->name, c);
      if (!c->virtual_device()->is_fully_unconstrained())
        fix(id, c->virtual_device(), c->span(), "'" + op->name + "' is placed", PlacementReason::Kind::kRule);
      for (const Expr& a : c->args) consume(g_.domains.at(a.get()), id);
      g_.place_of[c.get()] = id;
      g_.domains[c.get()] = produce(type_of(c), id, c);
      return;
    }
    const Domain& callee = g_.domains.at(c->op.get());
    if (!callee.function) throw Error(ErrorKind::kPlacement, "call of a non-function", c->span());
    const FunctionDomain& fd = *callee.function;
    for (size_t i = 0; i < c->args.size() && i < fd.param_nodes.size(); ++i) {
      const Domain& arg = g_.domains.at(c->args[i].get());
      if (fd.param_nodes[i] >= 0) consume(arg, fd.param_nodes[i]);
      unify(arg, fd.param_domains[i], "a function value passed as an argument" + span_text(c->span()));
    }
    size_t next = 0;
    Domain out = produce_leafwise(type_of(c), fd.result_nodes, &next, c);
    if (fd.result_domain.function) out.function = fd.result_domain.function;
    g_.domains[c.get()] = std::move(out);
  }

  const IRModule& mod_;
  const CompilationConfig& config_;
  PlacementGraph g_;
  std::unordered_map<std::string, std::shared_ptr<FunctionDomain>> globals_;
  std::unordered_map<const ExprNode*, std::shared_ptr<FunctionDomain>> function_domains_;
};

}  // namespace

PlacementGraph build_placement_graph(const IRModule& mod, const CompilationConfig& config) {
  return GraphBuilder(mod, config).build();
}

}  // namespace switchyard
