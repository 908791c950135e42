// The passes on 1,000,000-node chains of calls and of lets, in an 8 MiB
// stack (ARCHITECTURE.md invariant 4): no native recursion on data depth.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "ir/functor.h"
#include "op/registry.h"
#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/infer_type.h"
#include "transform/inline.h"
#include "transform/simplify_expr.h"
#include "transform/to_a_normal_form.h"
#include "transform/to_graph_normal_form.h"
#include "support/stack.h"

namespace switchyard {
namespace pass_deep_chain_test {

constexpr int kDepth = 1000000;

using testing::run_with_8mib_stack;

// How many calls of each operator @main holds (one walk).
std::map<std::string, size_t> count_calls(const IRModule& mod) {
  std::map<std::string, size_t> counts;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    if (const OpNode* op = call ? as<OpNode>(call->op) : nullptr) ++counts[op->name];
  });
  return counts;
}

// The lets along the chain of let bodies from @main's body, and what ends it.
size_t count_lets(const IRModule& mod, Expr* end = nullptr) {
  size_t n = 0;
  Expr e = mod.lookup("main")->body;
  while (const LetNode* let = as<LetNode>(e)) {
    ++n;
    e = let->body;
  }
  if (end) *end = e;
  return n;
}

TEST(PassDeepChain, OptimisationPassesOnAMillionCalls) {
  run_with_8mib_stack([] {
    // negative, multiply by one (an identity), add of a constant sum (folds),
    // and a repeated exp (merges), in turn.
    Type scalar = scalar_type(DType::kFloat32);
    Var x = make_var("x", scalar);
    Expr one = make_scalar_f32(1);
    Expr e = x;
    // Seven calls per step, about a million in all.
    for (int i = 0; i < kDepth / 7; ++i) {
      e = make_op_call("negative", {e});
      e = make_op_call("multiply", {e, one});
      e = make_op_call("add", {e, make_op_call("add", {one, one})});
      e = make_op_call("add", {make_op_call("exp", {e}), make_op_call("exp", {e})});
    }
    IRModule mod;
    mod.add("main", make_function({x}, e));
    mod = infer_type(mod);
    mod = Sequential({SimplifyExpr(), FoldConstant(), EliminateCommonSubexpr(), DeadCodeElimination()})(mod);
    size_t steps = kDepth / 7;
    // The identities are gone, the constant sums folded, the exps merged.
    EXPECT_EQ(count_calls(mod), (std::map<std::string, size_t>{{"add", 2 * steps}, {"exp", steps}, {"negative", steps}}));
  });
}

TEST(PassDeepChain, NormalFormsDeadCodeAndInliningOnAMillionLets) {
  run_with_8mib_stack([] {
    Type scalar = scalar_type(DType::kFloat32);
    Var v = make_var("v", scalar);
    Function callee = make_function({v}, make_op_call("negative", {v}), scalar);
    // let a_i = @flip(a_{i-1}); let dead_i = exp(a_i); ... — half the lets dead.
    Var x = make_var("x", scalar);
    std::vector<std::pair<Var, Expr>> bindings;
    bindings.reserve(kDepth);
    Expr previous = x;
    for (int i = 0; i < kDepth / 2; ++i) {
      Var a = make_var("a");
      bindings.push_back({a, make_call(make_global_var("flip"), {previous})});
      bindings.push_back({make_var("dead"), make_op_call("exp", {a})});
      previous = a;
    }
    Expr body = previous;
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) body = make_let(it->first, it->second, body);
    bindings.clear();
    IRModule mod;
    mod.add("flip", callee);
    mod.add("main", make_function({x}, body));
    mod = infer_type(mod);

    mod = DeadCodeElimination()(mod);
    EXPECT_EQ(count_lets(mod), size_t(kDepth / 2));
    mod = Inline()(mod);
    EXPECT_FALSE(mod.contains("flip"));
    mod = ToGraphNormalForm()(mod);
    Expr end;
    EXPECT_EQ(count_lets(mod, &end), 0u);
    EXPECT_TRUE(as_op_call(end, "negative"));
    mod = ToANormalForm()(mod);
    EXPECT_EQ(count_lets(mod), size_t(kDepth / 2));
  });
}

}  // namespace pass_deep_chain_test
}  // namespace switchyard
