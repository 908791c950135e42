// EliminateCommonSubexpr: merges equal computations on one device only, with
// equal attributes only, cascading through merged arguments.
#include <gtest/gtest.h>

#include "op/registry.h"
#include "pass_test_util.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/instruments.h"

namespace switchyard::testing {
namespace eliminate_common_subexpr_test {

TEST(EliminateCommonSubexpr, MergesEqualCallsAndTheirUsers) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, %y);
  %1 = add(%x, %y);
  %2 = exp(%0);
  %3 = exp(%1);
  %4 = (%2, %3);
  %5 = %4.0;
  %6 = %4.0;
  multiply(%5, %6)
}
)");
  IRModule out = EliminateCommonSubexpr()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, %y);
  %1 = exp(%0);
  %2 = (%1, %1);
  %3 = %2.0;
  multiply(%3, %3)
}
)");
  // The first occurrence is kept, with its span.
  EXPECT_EQ(span_positions(calls_of(out, "add")[0]->span()), std::vector<std::string>{"3:8"});
}

TEST(EliminateCommonSubexpr, NeverMergesAcrossDevices) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:0, %y: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = device_copy(%y, src="cpu:0", dst="cpu:1") @cpu:1;
  %2 = add(%x, %y) @cpu:0;
  %3 = add(%0, %1) @cpu:1;
  %4 = add(%0, %1) @cpu:1;
  %5 = device_copy(%2, src="cpu:0", dst="cpu:1") @cpu:1;
  %6 = multiply(%3, %4) @cpu:1;
  multiply(%5, %6) @cpu:1
}
)");
  IRModule out = EliminateCommonSubexpr()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32] @cpu:0, %y: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = device_copy(%y, src="cpu:0", dst="cpu:1") @cpu:1;
  %2 = add(%x, %y) @cpu:0;
  %3 = add(%0, %1) @cpu:1;
  %4 = device_copy(%2, src="cpu:0", dst="cpu:1") @cpu:1;
  %5 = multiply(%3, %3) @cpu:1;
  multiply(%4, %5) @cpu:1
}
)");
  InvariantChecker().check(out, "EliminateCommonSubexpr");
}

TEST(EliminateCommonSubexpr, IdenticalCallsOnTwoDevicesBothStay) {
  // The same expression wished onto two devices before planning: merging
  // would lose one wish.
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  (add(%x, %y) @cpu:0, add(%x, %y) @cpu:1)
}
)");
  IRModule out = EliminateCommonSubexpr()(mod);
  EXPECT_EQ(calls_of(out, "add").size(), 2u);
}

TEST(EliminateCommonSubexpr, NeverMergesDifferentAttributes) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32]) {
  %0 = sum(%x, axis=[0]);
  %1 = sum(%x, axis=[1]);
  %2 = on_device(%x, device="cpu:0");
  %3 = on_device(%x, device="cpu:1");
  %4 = on_device(%x, device="cpu:1");
  (%0, %1, %2, %3, %4)
}
)");
  IRModule out = EliminateCommonSubexpr()(mod);
  EXPECT_EQ(calls_of(out, "sum").size(), 2u);
  EXPECT_EQ(calls_of(out, "on_device").size(), 2u);  // the two equal wishes for cpu:1 merge
}

TEST(EliminateCommonSubexpr, EqualCopiesOfOneValueMerge) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> (Tensor[(2), float32], Tensor[(2), float32]) @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  (%0, %1) @cpu:1
}
)");
  IRModule out = EliminateCommonSubexpr()(mod);
  EXPECT_EQ(calls_of(out, "device_copy").size(), 1u);
}

TEST(EliminateCommonSubexpr, NeverReachesIntoFusedKernels) {
  // exp(c) inside a primitive function and exp(c) outside it: merging would
  // make the kernel use a value computed outside it.
  Type vector = tensor_type({2}, DType::kFloat32);
  Expr c = make_constant(tensor_f32({2}, {1, 2}));
  Var p = make_var("p", vector);
  Function kernel = make_function({p}, make_op_call("add", {p, make_op_call("exp", {c})}), vector,
                                  make_attrs({{"Primitive", int64_t(1)}}));
  Var x = make_var("x", vector);
  Expr body = make_op_call("add", {make_call(kernel, {x}), make_op_call("exp", {c})});
  IRModule mod;
  mod.add("main", make_function({x}, body));
  mod = infer_type(mod);
  IRModule out = EliminateCommonSubexpr()(mod);
  size_t exps = 0;
  post_order_visit(out.lookup("main"), [&](const Expr& e) { exps += as_op_call(e, "exp") ? 1 : 0; });
  EXPECT_EQ(exps, 2u);
}

}  // namespace eliminate_common_subexpr_test
}  // namespace switchyard::testing
