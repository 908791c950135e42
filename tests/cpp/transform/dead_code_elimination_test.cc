// DeadCodeElimination: unused let bindings disappear, transitively and inside
// branches and function literals; used ones and their devices stay.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "transform/dead_code_elimination.h"

namespace switchyard {
namespace dead_code_elimination_test {

using testing::expect_module;
using testing::typed;

// A primitive function is a kernel, left as it is until lowering, as by
// every pass over functions (map_functions).
TEST(DeadCodeElimination, LeavesPrimitiveFunctionsAlone) {
  IRModule mod = typed(R"(
def @kernel(%p: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
  let %dead = exp(%p);
  %p
}
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a = exp(%x);
  %x
}
)");
  IRModule out = DeadCodeElimination()(mod);
  EXPECT_TRUE(out.lookup("kernel").same_as(mod.lookup("kernel")));
  EXPECT_EQ(as<LetNode>(out.lookup("main")->body), nullptr);
}

TEST(DeadCodeElimination, RemovesUnusedBindingsTransitively) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32], %flag: bool) -> Tensor[(2), float32] {
  let %a = exp(%x);
  let %b = add(%a, %a);
  let %c = negative(%x) @cpu:1;
  let %d = if (%flag) {
    let %e = abs(%c);
    %c
  } else {
    let %f = fn (%u: Tensor[(2), float32]) -> Tensor[(2), float32] {
      let %g = exp(%u);
      %u
    };
    %f(%c)
  };
  %d
}
)");
  expect_module(DeadCodeElimination()(mod), R"(
def @main(%x: Tensor[(2), float32], %flag: bool) -> Tensor[(2), float32] {
  let %c = negative(%x) @cpu:1;
  let %d = if (%flag) {
    %c
  } else {
    let %f = fn (%u: Tensor[(2), float32]) -> Tensor[(2), float32] {
      %u
    };
    %f(%c)
  };
  %d
}
)");
}

TEST(DeadCodeElimination, KeepsAModuleWithoutDeadBindings) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %0 = exp(%x);
  let %a = negative(%0);
  add(%a, %0)
}
)");
  EXPECT_TRUE(DeadCodeElimination()(mod).lookup("main").same_as(mod.lookup("main")));
}

}  // namespace dead_code_elimination_test
}  // namespace switchyard
