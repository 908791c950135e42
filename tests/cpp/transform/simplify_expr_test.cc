// SimplifyExpr: identities removed only when type and device stay, chains of
// shape views and transposes composed, devices and spans of the new nodes.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "support/error.h"
#include "transform/dead_code_elimination.h"
#include "transform/simplify_expr.h"

namespace switchyard::testing {
namespace simplify_expr_test {

TEST(SimplifyExpr, RemovesArithmeticIdentities) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, 0f);
  %1 = multiply(1f, %0);
  %2 = subtract(%1, 0f);
  %3 = divide(%2, 1f);
  %4 = multiply(%3, Tensor[(3), float32]{1, 1, 1});
  %5 = add(-0f, %4);
  %6 = negative(%5);
  %7 = negative(%6);
  add(%7, %y)
}
)");
  expect_module(SimplifyExpr()(mod), R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  add(%x, %y)
}
)");
}

TEST(SimplifyExpr, KeepsRewritesThatWouldChangeTheType) {
  // Adding a (2, 3) zero broadcasts %x to (2, 3); multiplying by 2 is no identity.
  std::string text = R"(
def @main(%x: Tensor[(3), float32], %i: Tensor[(3), int32]) -> (Tensor[(2, 3), float32], Tensor[(3), float32], Tensor[(3), float32], Tensor[(3), float32]) {
  %0 = add(%x, Tensor[(2, 3), float32]{0, 0, 0, 0, 0, 0});
  %1 = multiply(%x, 2f);
  %2 = cast(%i, dtype="float32");
  %3 = subtract(0f, %x);
  (%0, %1, %2, %3)
}
)";
  IRModule mod = typed(text);
  IRModule out = SimplifyExpr()(mod);
  EXPECT_TRUE(out.lookup("main").same_as(mod.lookup("main")));
}

TEST(SimplifyExpr, ComposesTransposes) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) -> (Tensor[(2, 3, 4), float32], Tensor[(4, 3, 2), float32], Tensor[(2, 3, 4), float32], Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 2, 0]);
  %1 = transpose(%0, axes=[2, 0, 1]);
  %2 = transpose(%0, axes=[1, 0, 2]);
  %3 = transpose(%x);
  %4 = transpose(%3);
  %5 = transpose(%x, axes=[0, 1, -1]);
  (%1, %2, %4, %5)
}
)");
  expect_module(SimplifyExpr()(mod), R"(
def @main(%x: Tensor[(2, 3, 4), float32]) -> (Tensor[(2, 3, 4), float32], Tensor[(4, 3, 2), float32], Tensor[(2, 3, 4), float32], Tensor[(2, 3, 4), float32]) {
  (%x, transpose(%x, axes=[2, 1, 0]), %x, %x)
}
)");
}

TEST(SimplifyExpr, MergesShapeViewsAndDropsNoOps) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32]) -> (Tensor[(6), float32], Tensor[(2, 3), float32], Tensor[(3, 2), float32]) {
  %0 = reshape(%x, newshape=[6]);
  %1 = expand_dims(%0, axis=0);
  %2 = reshape(%1, newshape=[3, -1]);
  %3 = reshape(%x, newshape=[2, 3]);
  %4 = squeeze(%3);
  %5 = cast(%4, dtype="float32");
  %6 = expand_dims(%5, axis=0, num_newaxis=0);
  %7 = broadcast_to(%6, shape=[2, 3]);
  (%0, %7, %2)
}
)");
  expect_module(SimplifyExpr()(mod), R"(
def @main(%x: Tensor[(2, 3), float32]) -> (Tensor[(6), float32], Tensor[(2, 3), float32], Tensor[(3, 2), float32]) {
  (reshape(%x, newshape=[6]), %x, reshape(%x, newshape=[3, 2]))
}
)");
}

TEST(SimplifyExpr, NewNodesTakeTheDeviceAndSpanOfTheNodeTheyReplace) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2, 3), float32] @cpu:0) -> Tensor[(3, 2), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = reshape(%0, newshape=[6]) @cpu:1;
  %2 = 1f @cpu:1;
  %3 = multiply(%1, %2) @cpu:1;
  reshape(%3, newshape=[3, 2]) @cpu:1
}
)");
  IRModule out = SimplifyExpr()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2, 3), float32] @cpu:0) -> Tensor[(3, 2), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  reshape(%0, newshape=[3, 2]) @cpu:1
}
)");
  std::vector<Expr> reshapes = calls_of(out, "reshape");
  ASSERT_EQ(reshapes.size(), 1u);
  EXPECT_EQ(reshapes[0]->virtual_device()->str(), "cpu:1");
  EXPECT_EQ(span_positions(reshapes[0]->span()), std::vector<std::string>{"7:3"});
  EXPECT_TRUE(reshapes[0]->checked_type());
  // The copy is kept as it was: same node, span and device.
  EXPECT_TRUE(calls_of(out, "device_copy")[0].same_as(calls_of(mod, "device_copy")[0]));
}

TEST(SimplifyExpr, KeepsAnIdentityWhoseOperandLivesElsewhere) {
  // Before planning, the wish on the add is the only record of where it
  // runs; replacing it by %x would lose it.
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] {
  add(%x, 0f) @cpu:1
}
)");
  IRModule out = SimplifyExpr()(mod);
  ASSERT_EQ(calls_of(out, "add").size(), 1u);
  EXPECT_EQ(calls_of(out, "add")[0]->virtual_device()->str(), "cpu:1");
}

// A layer normalisation written out as exporters before opset 17 do becomes
// one nn.layer_norm, scale and shift included, computing the same values;
// with another axis or a power other than 2 it stays as written.
TEST(SimplifyExpr, FoldsAWrittenOutLayerNormalisation) {
  const std::string written = R"(
def @main(%x: Tensor[(2, 4, 3), float32]) -> Tensor[(2, 4, 3), float32] {
  %0 = mean(%x, axis=[-1], keepdims=True);
  %1 = subtract(%x, %0);
  %2 = power(%1, 2f);
  %3 = mean(%2, axis=[-1], keepdims=True);
  %4 = add(%3, 1e-05f);
  %5 = sqrt(%4);
  %6 = divide(%1, %5);
  %7 = multiply(%6, Tensor[(3), float32]{0.5, 2, -1});
  add(%7, Tensor[(3), float32]{1, 0, 3})
}
)";
  IRModule mod = typed(written);
  IRModule simpler = DeadCodeElimination()(SimplifyExpr()(mod));
  EXPECT_EQ(calls_of(simpler, "nn.layer_norm").size(), 1u);
  EXPECT_EQ(calls_of(simpler, "mean").size() + calls_of(simpler, "sqrt").size() + calls_of(simpler, "multiply").size(),
            0u);
  NDArray x(DType::kFloat32, {2, 4, 3});
  for (int i = 0; i < 24; ++i) x.as<float>()[i] = 0.37f * float(i % 7) - float(i % 3);
  NDArray before = flatten_value(evaluate(mod, {{"x", x}})).at(0);
  NDArray after = flatten_value(evaluate(simpler, {{"x", x}})).at(0);
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(after.as<float>()[i], before.as<float>()[i], 1e-5) << i;

  std::string other_axis = written;
  other_axis.replace(other_axis.find("axis=[-1]"), 9, "axis=[1]");
  EXPECT_TRUE(calls_of(SimplifyExpr()(typed(other_axis)), "nn.layer_norm").empty());
  std::string cube = written;
  cube.replace(cube.find("2f"), 2, "3f");
  EXPECT_TRUE(calls_of(SimplifyExpr()(typed(cube)), "nn.layer_norm").empty());
}

TEST(SimplifyExpr, GetsInferTypeFirstOnAnUntypedModule) {
  IRModule untyped = parse_module("def @main(%x: float32) -> float32 { add(%x, 0f) }", "untyped.sy");
  IRModule out = Sequential({SimplifyExpr()})(untyped);
  EXPECT_TRUE(pass_in_effect("InferType", out));
  EXPECT_NE(as<VarNode>(out.lookup("main")->body), nullptr);
}

}  // namespace simplify_expr_test
}  // namespace switchyard::testing
