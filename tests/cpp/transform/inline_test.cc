// Inline: small non-recursive callees inlined (callees first) with their own
// spans and renamed let variables, placement respected, dead globals removed.
#include <gtest/gtest.h>

#include "analysis/well_formed.h"
#include "pass_test_util.h"
#include "transform/inline.h"

namespace switchyard {
namespace inline_test {

using testing::calls_of;
using testing::expect_module;
using testing::span_positions;
using testing::tensor_f32;
using testing::typed;

const char* kModule = R"(
def @square(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  multiply(%v, %v)
}

def @big(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  exp(exp(exp(exp(%v))))
}

def @unused(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  negative(%v)
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @big(@square(@square(%x)))
}
)";

IRModule run_inline(const IRModule& mod, int64_t max_calls) {
  PassContext ctx;
  ctx.config["inline.max_calls"] = max_calls;
  return Inline()(mod, ctx);
}

TEST(Inline, InlinesSmallCalleesAndRemovesThem) {
  IRModule out = run_inline(typed(kModule), 3);
  expect_module(out, R"(
def @big(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  exp(exp(exp(exp(%v))))
}

def @unused(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  negative(%v)
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %0 = multiply(%x, %x);
  %1 = multiply(%0, %0);
  @big(%1)
}
)");
  // The inlined nodes keep the callee's span.
  std::vector<Expr> multiplies = calls_of(out, "multiply");
  ASSERT_EQ(multiplies.size(), 2u);
  for (const Expr& m : multiplies) EXPECT_EQ(span_positions(m->span()), std::vector<std::string>{"3:3"});
}

TEST(Inline, TheDefaultLimitIsEightCalls) {
  IRModule out = Inline()(typed(kModule));
  EXPECT_FALSE(out.contains("square"));
  EXPECT_FALSE(out.contains("big"));
  EXPECT_TRUE(out.contains("unused"));  // never referenced, so not "no longer referenced"
  EXPECT_EQ(calls_of(out, "exp").size(), 4u);
  EXPECT_EQ(run_inline(typed(kModule), 0).functions().size(), 4u);
}

TEST(Inline, RenamesLetVariablesApartAtEachCallSite) {
  IRModule mod = typed(R"(
def @twice(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %t = add(%v, %v);
  let %f = fn (%u: Tensor[(2), float32]) -> Tensor[(2), float32] { negative(%u) };
  %f(%t)
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @twice(@twice(%x))
}
)");
  IRModule out = Inline()(mod);
  EXPECT_FALSE(out.contains("twice"));
  EXPECT_FALSE(check_scoping(out).has_value()) << check_scoping(out)->message;
  testing::expect_types_kept(out);
  std::map<std::string, NDArray> inputs{{"x", tensor_f32({2}, {1.5f, -3.0f})}};
  EXPECT_TRUE(flatten_value(evaluate(out, inputs))[0].bitwise_equal(flatten_value(evaluate(mod, inputs))[0]));
}

TEST(Inline, KeepsCallsPlacedOtherwiseThanTheCallee) {
  // Before planning, the callee's parameter wish is the only record of
  // where its argument must go.
  IRModule mod = typed(R"(
def @on_one(%v: Tensor[(2), float32] @cpu:1) -> Tensor[(2), float32] @cpu:1 {
  negative(%v) @cpu:1
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @on_one(%x)
}
)");
  IRModule out = Inline()(mod);
  EXPECT_TRUE(out.contains("on_one"));
  EXPECT_TRUE(out.lookup("main").same_as(mod.lookup("main")));
}

TEST(Inline, NeverInlinesRecursiveFunctions) {
  IRModule mod = parse_module(R"(
def @loop(%v: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @loop(%v)
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @loop(%x)
}
)", "recursive.sy");
  IRModule out = Inline()(mod);
  EXPECT_TRUE(out.contains("loop"));
  EXPECT_TRUE(out.lookup("main").same_as(mod.lookup("main")));
}

}  // namespace inline_test
}  // namespace switchyard
