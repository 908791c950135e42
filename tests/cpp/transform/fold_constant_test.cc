// FoldConstant: values, devices and fused spans of folded constants; copies
// and device wishes; tuples; faults left for run time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "pass_test_util.h"
#include "transform/fold_constant.h"
#include "transform/instruments.h"

namespace switchyard::testing {
namespace fold_constant_test {

TEST(FoldConstant, FoldsOnTheDeviceOfTheReplacedExpressionWithAFusedSpan) {
  IRModule mod = planned(R"(
def @main(%y: Tensor[(2), float32] @cpu:1) -> Tensor[(2), float32] @cpu:1 {
  %0 = Tensor[(2), float32]{1, 2} @cpu:1;
  %1 = 3f @cpu:1;
  %2 = multiply(%0, %1) @cpu:1;
  %3 = exp(%2) @cpu:1;
  add(%y, %3) @cpu:1
}
)");
  IRModule out = FoldConstant()(mod);
  std::vector<Expr> adds = calls_of(out, "add");
  ASSERT_EQ(adds.size(), 1u);
  ASSERT_EQ(calls_of(out, "exp").size(), 0u);
  const ConstantNode* folded = as<ConstantNode>(as<CallNode>(adds[0])->args[1]);
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->virtual_device()->str(), "cpu:1");
  EXPECT_EQ(folded->data.shape(), std::vector<int64_t>{2});
  EXPECT_FLOAT_EQ(folded->data.as<float>()[0], std::exp(3.0f));
  EXPECT_FLOAT_EQ(folded->data.as<float>()[1], std::exp(6.0f));
  // Every folded node's span: both constants, the multiply and the exp.
  std::vector<std::string> parts = span_positions(folded->span());
  std::sort(parts.begin(), parts.end());
  EXPECT_EQ(parts, (std::vector<std::string>{"3:8", "4:8", "5:8", "6:8"}));
  EXPECT_TRUE(type_equal(folded->checked_type(), tensor_type({2}, DType::kFloat32)));
  expect_types_kept(out);
  InvariantChecker().check(out, "FoldConstant");
}

TEST(FoldConstant, EachDeviceKeepsItsOwnFoldedConstant) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = 2f @cpu:0;
  %1 = 3f @cpu:0;
  %2 = add(%0, %1) @cpu:0;
  %3 = add(%x, %2) @cpu:0;
  %4 = device_copy(%3, src="cpu:0", dst="cpu:1") @cpu:1;
  %5 = 2f @cpu:1;
  %6 = 3f @cpu:1;
  %7 = add(%5, %6) @cpu:1;
  add(%4, %7) @cpu:1
}
)");
  IRModule out = FoldConstant()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = 5f @cpu:0;
  %1 = add(%x, %0) @cpu:0;
  %2 = device_copy(%1, src="cpu:0", dst="cpu:1") @cpu:1;
  %3 = 5f @cpu:1;
  add(%2, %3) @cpu:1
}
)");
  InvariantChecker().check(out, "FoldConstant");
}

TEST(FoldConstant, ACopyOfAConstantBecomesTheConstantOnTheDestination) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:1) -> Tensor[(2), float32] @cpu:1 {
  %0 = Tensor[(2), float32]{1, 2} @cpu:0;
  %1 = device_copy(%0, src="cpu:0", dst="cpu:1") @cpu:1;
  add(%x, %1) @cpu:1
}
)");
  IRModule out = FoldConstant()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32] @cpu:1) -> Tensor[(2), float32] @cpu:1 {
  %0 = Tensor[(2), float32]{1, 2} @cpu:1;
  add(%x, %0) @cpu:1
}
)");
  const ConstantNode* placed = as<ConstantNode>(as<CallNode>(calls_of(out, "add")[0])->args[1]);
  ASSERT_NE(placed, nullptr);
  std::vector<std::string> parts = span_positions(placed->span());
  std::sort(parts.begin(), parts.end());
  EXPECT_EQ(parts, (std::vector<std::string>{"3:8", "4:8"}));
  InvariantChecker().check(out, "FoldConstant");
}

TEST(FoldConstant, NeverFoldsDeviceWishesOrUnplacedCopies) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %0 = on_device(2f, device="cpu:1");
  %1 = device_copy(3f, src="cpu:0", dst="cpu:1");
  %2 = add(%0, %1);
  add(%x, %2)
}
)");
  IRModule out = FoldConstant()(mod);
  EXPECT_TRUE(out.lookup("main").same_as(mod.lookup("main")));
}

TEST(FoldConstant, FoldsTuplesAndProjections) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32], Tensor[(3), float32]) {
  %0 = Tensor[(4), float32]{1, 2, 3, 4};
  %1 = split(%0, indices_or_sections=2);
  %2 = %1.1;
  %3 = (%x, Tensor[(2), float32]{5, 6});
  %4 = %3.1;
  %5 = (Tensor[(2), float32]{7, 8}, 9f);
  %6 = expand_dims(%5.1, axis=0);
  %7 = concatenate((%5.0, %6));
  (add(%x, %2), %4, %7)
}
)");
  expect_module(FoldConstant()(mod), R"(
def @main(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32], Tensor[(3), float32]) {
  (add(%x, Tensor[(2), float32]{3, 4}), Tensor[(2), float32]{5, 6}, Tensor[(3), float32]{7, 8, 9})
}
)");
}

TEST(FoldConstant, LeavesArithmeticFaultsForRunTime) {
  IRModule mod = typed(R"(
def @main(%x: int32) -> int32 {
  %0 = divide(1, 0);
  add(%x, %0)
}
)");
  IRModule out = FoldConstant()(mod);
  EXPECT_EQ(calls_of(out, "divide").size(), 1u);
}

IRModule folded_with_limit(const IRModule& mod, std::optional<int64_t> max_bytes) {
  PassContext ctx;
  if (max_bytes) ctx.config["FoldConstant.max_bytes"] = AttrValue(*max_bytes);
  return FoldConstant()(mod, ctx);
}

// A 55-byte broadcast_to(1f, shape=[25000, 20000]) made a 2 GB weight: a
// result over the limit that is larger than the constants it reads stays
// a kernel. (The limit is small here so the test folds nothing large.)
TEST(FoldConstant, LeavesAResultOverTheLimitLargerThanItsInputsUnfolded) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(1000), float32]) -> Tensor[(1000), float32] {
  add(%x, broadcast_to(1f, shape=[1000]))
}
)");
  EXPECT_EQ(calls_of(folded_with_limit(mod, 1024), "broadcast_to").size(), 1u) << "4000 bytes from 4";
  EXPECT_EQ(calls_of(folded_with_limit(mod, 4000), "broadcast_to").size(), 0u) << "at the limit";
  EXPECT_EQ(calls_of(folded_with_limit(mod, std::nullopt), "broadcast_to").size(), 0u) << "the default: 64 MiB";
  // The default limit: 64 MiB and 4 bytes more stays a kernel.
  IRModule large = typed(R"(
def @main() -> Tensor[(16777217), float32] {
  broadcast_to(1f, shape=[16777217])
}
)");
  EXPECT_EQ(calls_of(FoldConstant()(large), "broadcast_to").size(), 1u);
}

// A result over the limit no larger than its inputs folds: a transposed
// weight, a concatenation of two constants (even of one constant twice,
// which counts once, so doubling a constant again and again stops at the
// limit).
TEST(FoldConstant, FoldsAResultOverTheLimitNoLargerThanItsInputs) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(4, 4), float32]) -> (Tensor[(4, 4), float32], Tensor[(8, 4), float32], Tensor[(8, 4), float32]) {
  %0 = Tensor[(4, 4), float32]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  %1 = Tensor[(4, 4), float32]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  (add(%x, transpose(%0)), concatenate((%0, %1)), concatenate((%0, %0)))
}
)");
  IRModule out = folded_with_limit(mod, 32);
  EXPECT_EQ(calls_of(out, "transpose").size(), 0u);
  EXPECT_EQ(calls_of(out, "concatenate").size(), 1u) << "only the one reading a single constant twice stays";
}

TEST(FoldConstant, RequiresInferType) {
  EXPECT_EQ(FoldConstant().info().required, std::vector<std::string>{"InferType"});
}

}  // namespace fold_constant_test
}  // namespace switchyard::testing
