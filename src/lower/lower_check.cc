// What lowering needs of a planned module, checked up front with precise
// diagnostics.
#include "lower/lower_check.h"

#include <map>
#include <unordered_set>

#include "analysis/describe.h"
#include "analysis/symbolic_use.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"
#include "targets/code_generators.h"

namespace switchyard {

namespace {

class LowerableChecker {
 public:
  LowerableChecker(const IRModule& mod, const InvariantChecker* checker) : mod_(mod), checker_(checker) {}

  [[noreturn]] void fail(const Expr& node, const std::string& problem) const {
    std::string message = "cannot lower " + describe_node(node) + ": " + problem;
    if (!node->span().defined()) message += " (the node has no source span)";
    if (checker_) {
      std::string pass = checker_->last_pass_touching(node.get());
      message += pass.empty() ? "; no checked pass produced this node" : "; last produced by pass '" + pass + "'";
    }
    throw Error(ErrorKind::kBackend, message, node->span());
  }

  // The global functions `entry` reaches through calls, in discovery order.
  std::vector<std::string> reachable_functions(const std::string& entry) {
    std::vector<std::string> order{entry};
    std::unordered_set<std::string> seen{entry};
    for (size_t i = 0; i < order.size(); ++i) {
      post_order_visit(mod_.lookup(order[i]), [&](const Expr& e) {
        const CallNode* call = as<CallNode>(e);
        const GlobalVarNode* callee = call ? as<GlobalVarNode>(call->op) : nullptr;
        if (!callee) return;
        if (!mod_.find(callee->name)) fail(e, "it calls @" + callee->name + ", which the module does not define");
        if (seen.insert(callee->name).second) order.push_back(callee->name);
        calls_[order[i]].push_back({callee->name, e});
      });
    }
    return order;
  }

  // Recursion (direct or through other functions) has no static schedule.
  void check_no_recursion(const std::string& entry) {
    enum class State { kOnPath, kDone };
    std::map<std::string, State> state;
    struct Frame {
      std::string function;
      size_t next_call = 0;
    };
    std::vector<Frame> path{{entry, 0}};
    state[entry] = State::kOnPath;
    while (!path.empty()) {
      Frame& top = path.back();
      const std::vector<CallSite>& calls = calls_[top.function];
      if (top.next_call == calls.size()) {
        state[top.function] = State::kDone;
        path.pop_back();
        continue;
      }
      const CallSite& call = calls[top.next_call++];
      auto it = state.find(call.callee);
      if (it == state.end()) {
        state[call.callee] = State::kOnPath;
        path.push_back({call.callee, 0});
      } else if (it->second == State::kOnPath) {
        std::string cycle;
        bool in_cycle = false;
        for (const Frame& f : path) {
          in_cycle = in_cycle || f.function == call.callee;
          if (in_cycle) cycle += "@" + f.function + " -> ";
        }
        fail(call.node, "recursion (" + cycle + "@" + call.callee +
                            ") has no static schedule; the backend compiles straight-line code and if");
      }
    }
  }

  void check_function(const Function& fn, bool is_entry) {
    // Calls' callees are the only places a function may appear.
    std::unordered_set<const ExprNode*> callees;
    post_order_visit(fn, [&](const Expr& e) {
      if (const CallNode* call = as<CallNode>(e)) callees.insert(call->op.get());
    });
    // Constructs first: a closure's parameters are unplaced too, but the
    // closure is the problem to report.
    post_order_visit(fn, [&](const Expr& e) { check_construct(e, e.get() == fn.get(), callees); });
    post_order_visit(fn, [&](const Expr& e) { check_placed_and_typed(e); });
    if (is_entry)
      for (const Var& p : fn->params)
        if (!as_tensor(p->checked_type()))
          fail(p, "the entry function's parameters must be tensors, but this one has type " +
                      type_to_string(p->checked_type()));
  }

 private:
  struct CallSite {
    std::string callee;
    Expr node;
  };

  void check_construct(const Expr& e, bool is_definition, const std::unordered_set<const ExprNode*>& callees) {
    switch (e->kind()) {
      case ExprKind::kOp:
        if (!callees.count(e.get())) fail(e, "an operator used as a value cannot be compiled");
        return;
      case ExprKind::kGlobalVar:
        if (!callees.count(e.get())) fail(e, "a global function used as a value cannot be compiled");
        return;
      case ExprKind::kFunction: {
        const FunctionNode* f = as<FunctionNode>(e);
        if (is_definition) return;
        if (!f->is_primitive())
          fail(e, callees.count(e.get()) ? "a call of a function literal (a closure) cannot be compiled; only "
                                           "primitive (fused) functions become kernels"
                                         : "a function value cannot be compiled");
        if (!callees.count(e.get())) fail(e, "a primitive function used as a value cannot be compiled");
        return;
      }
      case ExprKind::kVar:
        if (callees.count(e.get())) fail(e, "a call of a function-valued variable cannot be compiled");
        return;
      case ExprKind::kCall:
        if (as_on_device(e)) fail(e, "an on_device wish remains; device planning must run first");
        return;
      case ExprKind::kConstant:
      case ExprKind::kLet:
      case ExprKind::kIf:
      case ExprKind::kTuple:
      case ExprKind::kTupleGetItem:
        return;
    }
  }

  // Tuples and lets are bookkeeping (their devices carry no code); operators
  // and global function names are never placed.
  void check_placed_and_typed(const Expr& e) {
    switch (e->kind()) {
      case ExprKind::kOp:
      case ExprKind::kGlobalVar:
      case ExprKind::kTuple:
      case ExprKind::kLet:
        return;
      case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kCall: case ExprKind::kFunction:
      case ExprKind::kIf: case ExprKind::kTupleGetItem:
        break;
    }
    if (!e->virtual_device()->is_fully_constrained())
      fail(e, "it is not fully placed (its device is " +
                  (e->virtual_device()->is_fully_unconstrained() ? std::string("unconstrained")
                                                                : e->virtual_device()->str()) +
                  "); every expression must be placed before lowering");
    if (!e->checked_type()) fail(e, "it has no type; type inference must run first");
    const VirtualDevice* vd = e->virtual_device();
    if (!code_generator_for(vd->kind()))
      fail(e, "no code generator for target '" + vd->target()->str() + "' (device " + vd->device_name() +
                  "): its device kind has no code generator");
  }

  const IRModule& mod_;
  const InvariantChecker* checker_;
  std::map<std::string, std::vector<CallSite>> calls_;  // caller -> calls of global functions
};

}  // namespace

void check_lowerable(const IRModule& mod, const std::string& entry, const InvariantChecker* checker) {
  if (!mod.find(entry)) throw Error(ErrorKind::kBackend, "the module has no function @" + entry + " to compile");
  refuse_symbolic_use(mod, ErrorKind::kBackend, "cannot lower", kStaticShapeRemedy);
  LowerableChecker lowerable(mod, checker);
  std::vector<std::string> functions = lowerable.reachable_functions(entry);
  lowerable.check_no_recursion(entry);
  for (const std::string& name : functions) lowerable.check_function(mod.lookup(name), name == entry);
}

}  // namespace switchyard
