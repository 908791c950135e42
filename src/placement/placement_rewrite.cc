// The rewrite after planning, as an ExprMutator keyed by original nodes.
#include "placement/placement_rewrite.h"

#include <map>
#include <unordered_map>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"

namespace switchyard {

namespace {

class PlacementRewriter : public ExprMutator {
 public:
  PlacementRewriter(const PlacementGraph& g, const PlacementSolution& s, const CompilationConfig& c)
      : g_(g), s_(s), config_(c) {}

  Expr visit_var(const Var& v) override {
    const VirtualDevice* vd;
    auto it = g_.place_of.find(v.get());
    if (it != g_.place_of.end()) {
      vd = s_.device[it->second];
    } else {
      vd = domain_device(g_.domains.at(v.get()));
    }
    return with_fields(v, {.virtual_device = vd});
  }

  // A constant keeps the device it states (a planned module's constants are
  // placed facts: re-planning must not move them); an unplaced one goes to
  // the default device, and each consumer elsewhere gets its own copy.
  Expr visit_constant(const Constant& c) override {
    const VirtualDevice* stated = stated_device(c);
    return with_fields(c, {.virtual_device = stated ? stated : config_.default_device});
  }

  Expr visit_call(const Call& c) override {
    if (const OpNode* op = as<OpNode>(c->op)) {
      const Expr& arg = c->args.at(0);
      if (op == on_device_op()) return copy_to(mutate(arg), domain(arg), place_device(c));
      if (op == device_copy_op()) {
        const VirtualDevice* src = config_.resolve(device_copy_attrs(*c).src);
        return with_fields(c, {.args = std::vector<Expr>{copy_to(mutate(arg), domain(arg), src)},
                               .virtual_device = place_device(c)});
      }
      const VirtualDevice* d = place_device(c);
      std::vector<Expr> args;
      for (const Expr& a : c->args) args.push_back(copy_to(mutate(a), domain(a), d));
      return with_fields(c, {.args = std::move(args), .virtual_device = d});
    }
    const FunctionDomain& fd = *domain(c->op).function;
    std::vector<Expr> args;
    for (size_t i = 0; i < c->args.size(); ++i) {
      Expr a = mutate(c->args[i]);
      if (fd.param_nodes[i] >= 0) a = copy_to(a, domain(c->args[i]), s_.device[fd.param_nodes[i]]);
      args.push_back(a);
    }
    return with_fields(c, {.op = mutate(c->op), .args = std::move(args),
                           .virtual_device = result_device(fd)});
  }

  Expr visit_function(const Function& f) override {
    const FunctionDomain& fd = *domain(f).function;
    std::vector<Var> params;
    for (const Var& p : f->params) params.push_back(downcast<VarNode>(mutate(p)));
    std::vector<const VirtualDevice*> targets;
    for (PlaceId r : fd.result_nodes) targets.push_back(s_.device[r]);
    size_t next = 0;
    Expr body = copy_leaves_to(mutate(f->body), domain(f->body), targets, &next);
    return with_fields(f, {.params = std::move(params), .body = body, .virtual_device = result_device(fd)});
  }

  Expr visit_let(const Let& l) override {
    Var var = downcast<VarNode>(mutate(l->var));
    Expr value = mutate(l->value);
    auto wish = g_.place_of.find(l->var.get());
    if (wish != g_.place_of.end()) value = copy_to(value, domain(l->value), s_.device[wish->second]);
    Expr body = mutate(l->body);
    return with_fields(l, {.var = var, .value = value, .body = body, .virtual_device = body->virtual_device()});
  }

  Expr visit_if(const If& i) override {
    const VirtualDevice* d = place_device(i);
    return with_fields(i, {.cond = copy_to(mutate(i->cond), domain(i->cond), config_.host_device),
                           .then_branch = copy_to(mutate(i->then_branch), domain(i->then_branch), d),
                           .else_branch = copy_to(mutate(i->else_branch), domain(i->else_branch), d),
                           .virtual_device = d});
  }

  Expr visit_tuple(const Tuple& t) override {
    std::vector<Expr> fields;
    for (const Expr& f : t->fields) fields.push_back(mutate(f));
    return with_fields(t, {.fields = std::move(fields), .virtual_device = domain_device(domain(t))});
  }

  Expr visit_tuple_get_item(const TupleGetItem& t) override {
    return with_fields(t, {.tuple = mutate(t->tuple), .virtual_device = domain_device(domain(t))});
  }

 private:
  const Domain& domain(const Expr& e) const { return g_.domains.at(e.get()); }

  // A function's result device: its leaves' common device, else the host.
  const VirtualDevice* result_device(const FunctionDomain& fd) const {
    if (fd.result_nodes.empty()) return domain_device(fd.result_domain);
    const VirtualDevice* common = s_.device[fd.result_nodes[0]];
    for (PlaceId r : fd.result_nodes)
      if (s_.device[r] != common) return config_.host_device;
    return common;
  }
  const VirtualDevice* place_device(const Expr& e) const { return s_.device[g_.place_of.at(e.get())]; }

  // The configured device a node states, or null when it states none.
  const VirtualDevice* stated_device(const Expr& e) const {
    const VirtualDevice* vd = e->virtual_device();
    return vd->is_fully_unconstrained() ? nullptr : config_.resolve(vd);
  }

  // A value's device: its producer's; a constant's is the one it states
  // (null when it states none).
  const VirtualDevice* value_device(ValueId v) const {
    PlaceId p = g_.values[v].producer;
    return p >= 0 ? s_.device[p] : stated_device(g_.values[v].expr);
  }

  // The common device of a domain's leaves, or the host when they differ.
  const VirtualDevice* domain_device(const Domain& d) const {
    if (d.function) return result_device(*d.function);
    LeafDevices leaves = leaf_devices(d);
    if (leaves.mixed) return config_.host_device;
    return leaves.device ? leaves.device : config_.default_device;
  }

  // What the leaves of a domain live on: nothing (constants only), one
  // device, or several.
  struct LeafDevices {
    const VirtualDevice* device = nullptr;
    bool mixed = false;
  };
  static LeafDevices merge(LeafDevices a, LeafDevices b) {
    if (a.mixed || b.mixed || (a.device && b.device && a.device != b.device)) return {nullptr, true};
    return {a.device ? a.device : b.device, false};
  }

  // Summarised once per shared tuple fields, bottom up without recursion, so
  // the tuples and projections of an n-deep nesting cost linear time.
  LeafDevices leaf_devices(const Domain& root) const {
    auto of_field = [this](const Domain& f) {
      if (!f.fields.empty()) return tuple_leaf_devices_.at(f.fields.identity());
      return LeafDevices{f.is_leaf() ? value_device(f.value) : nullptr, false};
    };
    if (root.fields.empty()) return of_field(root);
    std::vector<std::pair<const Domain*, size_t>> stack{{&root, 0}};
    while (!stack.empty()) {
      const Domain* d = stack.back().first;
      size_t& next = stack.back().second;
      if (tuple_leaf_devices_.count(d->fields.identity())) {
        stack.pop_back();
      } else if (next < d->fields.size()) {
        const Domain& f = d->fields[next++];
        if (!f.fields.empty() && !tuple_leaf_devices_.count(f.fields.identity())) stack.push_back({&f, 0});
      } else {
        LeafDevices summary;
        for (const Domain& f : d->fields) summary = merge(summary, of_field(f));
        tuple_leaf_devices_[d->fields.identity()] = summary;
        stack.pop_back();
      }
    }
    return tuple_leaf_devices_.at(root.fields.identity());
  }

  // `e` (the mutated expression for `d`) as consumed on device `to`.
  Expr copy_to(const Expr& e, const Domain& d, const VirtualDevice* to) {
    std::vector<ValueId> leaves;
    d.leaves(&leaves);
    std::vector<const VirtualDevice*> targets(leaves.size(), to);
    size_t next = 0;
    return copy_leaves_to(e, d, targets, &next);
  }

  bool needs_copy(const Domain& d, const std::vector<const VirtualDevice*>& targets, size_t first) const {
    std::vector<ValueId> leaves;
    d.leaves(&leaves);
    for (size_t i = 0; i < leaves.size(); ++i) {
      const VirtualDevice* to = targets.at(first + i);
      // A constant that states no device is materialised for each consumer.
      const VirtualDevice* from = value_device(leaves[i]);
      if (from != to) return true;
    }
    return false;
  }

  // `e` with leaf i of `d` consumed on targets[*next + i]; advances *next.
  Expr copy_leaves_to(const Expr& e, const Domain& d, const std::vector<const VirtualDevice*>& targets, size_t* next) {
    std::vector<ValueId> all;
    d.leaves(&all);
    size_t first = *next;
    *next += all.size();
    if (d.function || !needs_copy(d, targets, first)) return e;
    if (d.is_leaf()) {
      const VirtualDevice* to = targets[first];
      const PlaceValue& pv = g_.values[d.value];
      if (pv.producer < 0) return constant_at(downcast<ConstantNode>(pv.expr), to);
      auto key = std::make_pair(d.value, to);
      auto it = copies_.find(key);
      if (it != copies_.end()) return it->second;
      const VirtualDevice* from = value_device(d.value);
      Expr copy = make_device_copy(e, {.src = from, .dst = to},
                                   {.virtual_device = to, .span = pv.expr->span(), .checked_type = e->checked_type()});
      copies_.emplace(key, copy);
      produced_.insert(copy.get());
      return copy;
    }
    std::vector<Expr> fields;
    size_t cursor = first;
    const VirtualDevice* common = targets[first];
    for (size_t i = first; i < first + all.size(); ++i)
      if (targets[i] != common) common = config_.host_device;
    const TupleNode* tuple = as<TupleNode>(e);
    const TupleTypeNode* type = as_tuple(e->checked_type());
    for (size_t i = 0; i < d.fields.size(); ++i) {
      Expr field = tuple ? tuple->fields[i]
                         : Expr(make_tuple_get_item(e, int(i),
                                                    {.virtual_device = domain_device(d.fields[i]),
                                                     .span = e->span(),
                                                     .checked_type = type ? type->fields[i] : Type()}));
      fields.push_back(copy_leaves_to(field, d.fields[i], targets, &cursor));
    }
    Expr out = make_tuple(std::move(fields), {.virtual_device = common, .span = e->span(), .checked_type = e->checked_type()});
    produced_.insert(out.get());
    return out;
  }

  Expr constant_at(const Constant& c, const VirtualDevice* to) {
    auto key = std::make_pair(static_cast<const ExprNode*>(c.get()), to);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    Expr placed = with_fields(c, {.virtual_device = to});
    constants_.emplace(key, placed);
    produced_.insert(placed.get());
    return placed;
  }

  const PlacementGraph& g_;
  const PlacementSolution& s_;
  const CompilationConfig& config_;
  std::map<std::pair<ValueId, const VirtualDevice*>, Expr> copies_;
  std::map<std::pair<const ExprNode*, const VirtualDevice*>, Expr> constants_;
  mutable std::unordered_map<const void*, LeafDevices> tuple_leaf_devices_;  // by SharedFields::identity
};

}  // namespace

IRModule rewrite_placement(const IRModule& mod, const PlacementGraph& graph, const PlacementSolution& solution,
                           const CompilationConfig& config) {
  PlacementRewriter rewriter(graph, solution, config);
  IRModule out = rewriter.mutate_module(mod);
  out.set_devices(config.devices);
  out.set_device_planned(true);
  return out;
}

}  // namespace switchyard
