// ToGraphNormalForm: let-bound values become shared nodes; wishes carried
// only by a let variable keep their let; round trip with ToANormalForm.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "transform/to_a_normal_form.h"
#include "transform/to_graph_normal_form.h"

namespace switchyard {
namespace to_graph_normal_form_test {

using testing::expect_module;
using testing::planned;
using testing::typed;

TEST(ToGraphNormalForm, ReplacesLetsBySharedValues) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32], %flag: bool) -> Tensor[(2), float32] {
  let %a = exp(%x);
  let %b = if (%flag) {
    let %c = negative(%a);
    add(%c, %c)
  } else {
    %a
  };
  multiply(%b, %a)
}
)");
  IRModule out = ToGraphNormalForm()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32], %flag: bool) -> Tensor[(2), float32] {
  %0 = exp(%x);
  %1 = if (%flag) {
    %2 = negative(%0);
    add(%2, %2)
  } else {
    %0
  };
  multiply(%1, %0)
}
)");
  // The negative is used only inside the then branch and stays there.
  const IfNode* branch = nullptr;
  post_order_visit(out.lookup("main"), [&](const Expr& e) {
    if (is<IfNode>(e)) branch = as<IfNode>(e);
  });
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(is<CallNode>(branch->then_branch));
}

TEST(ToGraphNormalForm, KeepsALetWhoseVariableCarriesTheOnlyWish) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a @cpu:1 = exp(%x);
  let %b = negative(%a);
  %b
}
)");
  expect_module(ToGraphNormalForm()(mod), R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a @cpu:1 = exp(%x);
  negative(%a)
}
)");
}

TEST(ToGraphNormalForm, UndoesToANormalForm) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:0, %flag: bool @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = exp(%x) @cpu:0;
  %1 = if (%flag) {
    add(%0, %0) @cpu:0
  } else {
    negative(%0) @cpu:0
  } @cpu:0;
  %2 = device_copy(%1, src="cpu:0", dst="cpu:1") @cpu:1;
  abs(%2) @cpu:1
}
)");
  IRModule round_trip = ToGraphNormalForm()(ToANormalForm()(mod));
  expect_module(round_trip, print_module(mod));
}

}  // namespace to_graph_normal_form_test
}  // namespace switchyard
