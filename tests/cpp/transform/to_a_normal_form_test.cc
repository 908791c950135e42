// ToANormalForm: every intermediate value named in evaluation order, in the
// innermost scope enclosing its uses, each new variable on its value's device.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "transform/instruments.h"
#include "transform/to_a_normal_form.h"

namespace switchyard {
namespace to_a_normal_form_test {

using testing::expect_module;
using testing::planned;
using testing::tensor_f32;
using testing::typed;

const char* kBranchy = R"(
def @main(%x: Tensor[(2), float32] @cpu:0, %flag: bool @cpu:0) -> Tensor[(2), float32] @cpu:0 {
  %0 = exp(%x) @cpu:0;
  %1 = negative(%x) @cpu:0;
  %2 = if (%flag) {
    add(%0, %1) @cpu:0
  } else {
    multiply(%0, %0) @cpu:0
  } @cpu:0;
  abs(%2) @cpu:0
}
)";

TEST(ToANormalForm, BindsEachValueInTheInnermostScopeOfItsUses) {
  IRModule mod = planned(kBranchy);
  IRModule out = ToANormalForm()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32] @cpu:0, %flag: bool @cpu:0) -> Tensor[(2), float32] @cpu:0 {
  let %a = exp(%x) @cpu:0;
  let %b = if (%flag) {
    let %c = negative(%x) @cpu:0;
    let %d = add(%a, %c) @cpu:0;
    %d
  } else {
    let %e = multiply(%a, %a) @cpu:0;
    %e
  } @cpu:0;
  let %f = abs(%b) @cpu:0;
  %f
}
)");
  InvariantChecker().check(out, "ToANormalForm");
  std::map<std::string, NDArray> inputs{{"x", tensor_f32({2}, {0.5f, -2.0f})}, {"flag", NDArray(DType::kBool, {})}};
  inputs["flag"].as<bool>()[0] = true;
  EXPECT_TRUE(flatten_value(evaluate(out, inputs))[0].bitwise_equal(flatten_value(evaluate(mod, inputs))[0]));
}

TEST(ToANormalForm, NewVariablesCarryTheDeviceOfTheirValue) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  %0 = exp(%x) @cpu:0;
  %1 = device_copy(%0, src="cpu:0", dst="cpu:1") @cpu:1;
  negative(%1) @cpu:1
}
)");
  IRModule out = ToANormalForm()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] @cpu:1 {
  let %a @cpu:0 = exp(%x) @cpu:0;
  let %b @cpu:1 = device_copy(%a, src="cpu:0", dst="cpu:1") @cpu:1;
  let %c @cpu:1 = negative(%b) @cpu:1;
  %c
}
)");
  InvariantChecker().check(out, "ToANormalForm");
}

TEST(ToANormalForm, KeepsExistingLetsAndFlattensNestedOnes) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a = exp(%x);
  %0 = fn (%u: Tensor[(2), float32]) -> Tensor[(2), float32] {
    negative(abs(%u))
  };
  add(%0(%a), %a)
}
)");
  IRModule out = ToANormalForm()(mod);
  expect_module(out, R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a = exp(%x);
  let %f = fn (%u: Tensor[(2), float32]) -> Tensor[(2), float32] {
    let %b = abs(%u);
    let %c = negative(%b);
    %c
  };
  let %d = %f(%a);
  let %e = add(%d, %a);
  %e
}
)");
  // Already in A-normal form: a second run changes nothing structurally.
  expect_module(ToANormalForm()(out), print_module(out));
}

}  // namespace to_a_normal_form_test
}  // namespace switchyard
