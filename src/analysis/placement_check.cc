// Placement invariant checking over a planned module.
#include "analysis/placement_check.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/shared_fields.h"

namespace switchyard {

namespace {

// Where a value lives: one device, or one per tuple field. Fields are
// shared, so every nested tuple and projection is kept in linear memory.
struct Placement {
  const VirtualDevice* device = nullptr;  // set for non-tuples
  SharedFields<Placement> fields;         // set for tuples
  bool is_tuple() const { return device == nullptr; }
  // Every leaf device, in order.
  void leaves(std::vector<const VirtualDevice*>* out) const {
    visit_depth_first(*this, [out](const Placement& p) {
      if (!p.is_tuple()) out->push_back(p.device);
    });
  }
};

std::string dev(const VirtualDevice* vd) { return vd->is_fully_unconstrained() ? "an unconstrained device" : vd->str(); }
std::string layout_name(const VirtualDevice* vd) { return vd->layout().empty() ? "dense row-major" : vd->layout(); }

class PlacementChecker : public ExprVisitor {
 public:
  PlacementChecker(const IRModule& mod, const VirtualDevice* host, const Function& fn) : mod_(mod), host_(host) {
    post_order_visit(fn, [this](const Expr& e) {
      if (const FunctionNode* f = as<FunctionNode>(e); f && f->is_primitive())
        for (const Var& param : f->params) kernel_parameters_.insert(param.get());
    });
  }
  std::optional<Violation> violation;

  void fail(const std::string& msg, const Expr& node) {
    if (!violation) violation = Violation{msg, node};
  }

  // Structured placement of an already-visited node.
  const Placement& placement(const Expr& e) {
    auto it = placements_.find(e.get());
    if (it != placements_.end()) return it->second;
    return placements_[e.get()] = Placement{e->virtual_device(), {}};
  }

  void check_fully_placed(const Expr& e) {
    if (!e->virtual_device()->is_fully_constrained())
      fail(std::string(expr_kind_name(e->kind())) + " is not fully placed: its device is " +
               dev(e->virtual_device()),
           e);
  }

  // Layouts are compared where a value passes between kernels (calls of
  // functions, lets, tuples, branches, operator calls outside them); inside
  // a fused kernel (its operators' parameters, its result) the library
  // primitive reads and writes its own layouts, so there only the device
  // must agree.
  enum class Layouts : bool { kIgnored, kCompared };

  void expect_on(const Expr& arg, const VirtualDevice* want, const Expr& at, const std::string& what,
                 Layouts layouts = Layouts::kCompared) {
    std::vector<const VirtualDevice*> leaves;
    placement(arg).leaves(&leaves);
    for (const VirtualDevice* have : leaves) {
      if (have == want) continue;
      bool only_layout = have->with_layout("") == want->with_layout("");
      if (only_layout && layouts == Layouts::kIgnored) continue;
      if (only_layout)
        fail(what + " is laid out as " + layout_name(have) + " but is read as " + layout_name(want) +
                 " (no kernel converts it)",
             at);
      else
        fail(what + " lives on " + dev(have) + " but is consumed on " + dev(want) + " without a device_copy", at);
      return;
    }
  }

  // Whether `arg` is a fused kernel's parameter, or a tuple of them (a
  // channel concatenation's parts, read in the kernel's layout).
  bool reads_kernel_parameters(const Expr& arg) const {
    if (kernel_parameters_.count(arg.get())) return true;
    const TupleNode* tuple = as<TupleNode>(arg);
    return tuple && !tuple->fields.empty() &&
           std::all_of(tuple->fields.begin(), tuple->fields.end(),
                       [&](const Expr& field) { return kernel_parameters_.count(field.get()) > 0; });
  }

  void visit_var(const Var& v) override {
    check_fully_placed(v);
  }
  void visit_constant(const Constant& c) override { check_fully_placed(c); }

  void visit_call(const Call& c) override {
    check_fully_placed(c);
    if (const OpNode* op = as<OpNode>(c->op)) {
      if (op == on_device_op()) {
        fail("on_device remains after device planning", c);
        return;
      }
      if (op == device_copy_op()) {
        const DeviceCopyAttrs ends = device_copy_attrs(*c);
        const VirtualDevice* src = ends.src;
        const VirtualDevice* dst = ends.dst;
        if (!c->virtual_device()->same_device(dst))
          fail("device_copy to " + dst->device_name() + " is placed on " + dev(c->virtual_device()), c);
        std::vector<const VirtualDevice*> leaves;
        placement(c->args[0]).leaves(&leaves);
        for (const VirtualDevice* have : leaves)
          if (!have->same_device(src))
            fail("device_copy from " + src->device_name() + " reads a value that lives on " + dev(have), c);
        return;
      }
      for (size_t i = 0; i < c->args.size(); ++i)
        expect_on(c->args[i], c->virtual_device(), c, "argument " + std::to_string(i) + " of '" + op->name + "'",
                  reads_kernel_parameters(c->args[i]) ? Layouts::kIgnored : Layouts::kCompared);
      return;
    }
    // A call of a function value: arguments where its parameters live.
    const FunctionNode* callee = as<FunctionNode>(c->op);
    if (const GlobalVarNode* g = as<GlobalVarNode>(c->op)) {
      const Function* f = mod_.find(g->name);
      callee = f ? f->get() : nullptr;
    }
    if (callee) {
      for (size_t i = 0; i < c->args.size() && i < callee->params.size(); ++i)
        expect_on(c->args[i], callee->params[i]->virtual_device(), c,
                  "argument " + std::to_string(i) + " (parameter %" + callee->params[i]->name_hint + ")");
      if (c->virtual_device() == callee->virtual_device()) return;
      if (c->virtual_device()->with_layout("") == callee->virtual_device()->with_layout(""))
        fail("the call is laid out as " + layout_name(c->virtual_device()) + " but its callee's result is " +
                 layout_name(callee->virtual_device()),
             c);
      else
        fail("the call is placed on " + dev(c->virtual_device()) + " but its callee's result lives on " +
                 dev(callee->virtual_device()),
             c);
    }
  }

  void visit_function(const Function& f) override {
    check_fully_placed(f);
    // A tuple result keeps each field where it is; a tensor result is where the function says.
    if (!placement(f->body).is_tuple())
      expect_on(f->body, f->virtual_device(), f, "the function's result",
                f->is_primitive() ? Layouts::kIgnored : Layouts::kCompared);
  }

  void visit_let(const Let& l) override {
    placements_[l->var.get()] = placement(l->value);
    placements_[l.get()] = placement(l->body);
    if (l->var->virtual_device() != l->value->virtual_device() && !placement(l->value).is_tuple())
      fail("let variable %" + l->var->name_hint + " is placed on " + dev(l->var->virtual_device()) +
               " but its value lives on " + dev(l->value->virtual_device()),
           l);
  }

  void visit_if(const If& i) override {
    check_fully_placed(i);
    if (host_) expect_on(i->cond, host_, i, "the if condition");
    expect_on(i->then_branch, i->virtual_device(), i, "the then branch");
    expect_on(i->else_branch, i->virtual_device(), i, "the else branch");
  }

  void visit_tuple(const Tuple& t) override {
    std::vector<Placement> fields;
    for (const Expr& f : t->fields) fields.push_back(placement(f));
    Placement p;
    p.fields = SharedFields<Placement>(std::move(fields));
    placements_[t.get()] = std::move(p);
  }

  void visit_tuple_get_item(const TupleGetItem& t) override {
    const Placement& whole = placement(t->tuple);
    if (whole.is_tuple() && size_t(t->index) < whole.fields.size()) {
      const Placement field = whole.fields[t->index];
      placements_[t.get()] = field;
      if (!field.is_tuple() && field.device != t->virtual_device())
        fail("tuple projection ." + std::to_string(t->index) + " is placed on " + dev(t->virtual_device()) +
                 " but that field lives on " + dev(field.device),
             t);
    } else {
      check_fully_placed(t);
    }
  }

 private:
  const IRModule& mod_;
  const VirtualDevice* host_;
  std::unordered_map<const ExprNode*, Placement> placements_;
  std::unordered_set<const ExprNode*> kernel_parameters_;  // parameters of fused functions
};

}  // namespace

std::optional<Violation> check_placement(const IRModule& mod, const VirtualDevice* host) {
  for (const auto& [name, fn] : mod.functions()) {
    if (fn->is_primitive()) continue;  // fused kernels are placed by their call
    PlacementChecker checker(mod, host, fn);
    checker.visit(fn);
    if (checker.violation) return checker.violation;
  }
  return std::nullopt;
}

}  // namespace switchyard
