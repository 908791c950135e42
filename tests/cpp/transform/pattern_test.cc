// Dataflow patterns: what matches, consistent bindings, alternatives,
// attribute and type constraints, refused patterns, and rewriting that keeps
// the replaced node's device and span.
#include <gtest/gtest.h>

#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "transform/pattern.h"
#include "transform/pattern_rewrite.h"

namespace switchyard::testing {
namespace pattern_test {

// The body of @main.
Expr body_of(const IRModule& mod) { return mod.lookup("main")->body; }

TEST(Pattern, MatchesOperatorCallsAndTheirOperands) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = nn.relu(%x);
  add(%0, 1f)
}
)");
  Pattern relu_of_any = is_call(is_op("nn.relu"), {wildcard()});
  Pattern add_relu_const = is_call(is_op("add"), {relu_of_any, is_constant()});
  EXPECT_TRUE(match(add_relu_const, body_of(mod)));
  EXPECT_FALSE(match(relu_of_any, body_of(mod)));
  EXPECT_FALSE(match(is_call(is_op("add"), {is_constant(), wildcard()}), body_of(mod)));
  EXPECT_FALSE(match(is_call(is_op("add"), {wildcard()}), body_of(mod)));  // arity
  MatchMap bindings;
  Pattern x = is_var("x");
  ASSERT_TRUE(match(is_call(is_op("add"), {is_call(is_op("nn.relu"), {x}), wildcard()}), body_of(mod), &bindings));
  EXPECT_TRUE(bindings.at(x.get()).same_as(mod.lookup("main")->params[0]));
  EXPECT_FALSE(match(is_call(is_op("add"), {is_call(is_op("nn.relu"), {is_var("y")}), wildcard()}), body_of(mod)));
}

TEST(Pattern, OnePatternNodeStandsForOneExpression) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  (add(%x, %x), add(%x, %y))
}
)");
  const auto* tuple = as<TupleNode>(body_of(mod));
  Pattern same = wildcard();
  Pattern twice = is_call(is_op("add"), {same, same});
  EXPECT_TRUE(match(twice, tuple->fields[0]));
  EXPECT_FALSE(match(twice, tuple->fields[1]));
}

TEST(Pattern, AlternativesAttributesAndTypes) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(2, 3), int32]) -> (Tensor[(2), float32], Tensor[(2, 3), float32], Tensor[(2, 3), int32]) {
  (sum(%x, axis=[1]), nn.relu(%x), nn.relu(%i))
}
)");
  const auto* tuple = as<TupleNode>(body_of(mod));
  Pattern activation = either(is_call(is_op("nn.relu"), {wildcard()}), is_call(is_op("sigmoid"), {wildcard()}));
  EXPECT_TRUE(match(activation, tuple->fields[1]));
  EXPECT_FALSE(match(activation, tuple->fields[0]));
  Pattern sum = is_call(is_op("sum"), {wildcard()});
  EXPECT_TRUE(match(has_attrs(sum, {{"axis", std::vector<int64_t>{1}}}), tuple->fields[0]));
  EXPECT_FALSE(match(has_attrs(sum, {{"axis", std::vector<int64_t>{0}}}), tuple->fields[0]));
  Pattern relu = is_call(is_op("nn.relu"), {wildcard()});
  EXPECT_TRUE(match(has_type(relu, DType::kFloat32, std::nullopt), tuple->fields[1]));
  EXPECT_FALSE(match(has_type(relu, DType::kFloat32, std::nullopt), tuple->fields[2]));
  EXPECT_TRUE(match(has_type(relu, std::nullopt, std::vector<int64_t>{2, 3}), tuple->fields[2]));
  EXPECT_FALSE(match(has_type(relu, std::nullopt, std::vector<int64_t>{3, 2}), tuple->fields[2]));
}

TEST(Pattern, AnAlternativeThatFailsLeavesNoBindingsBehind) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) -> Tensor[(2), float32] {
  add(%x, %y)
}
)");
  // The left side binds `a` to %x before failing on its second operand; the
  // right side must be free to bind `a` to %y.
  Pattern a = wildcard();
  Pattern left = is_call(is_op("add"), {a, is_constant()});
  Pattern right = is_call(is_op("add"), {wildcard(), a});
  MatchMap bindings;
  ASSERT_TRUE(match(either(left, right), body_of(mod), &bindings));
  EXPECT_TRUE(bindings.at(a.get()).same_as(mod.lookup("main")->params[1]));
}

TEST(Pattern, ConstantValuesAndConditions) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(3), float32]) -> (Tensor[(3), float32], Tensor[(3), float32], Tensor[(3), float32]) {
  (multiply(%x, Tensor[(3), float32]{1, 1, 1}), multiply(%x, 1f), multiply(%x, Tensor[(3), float32]{1, 2, 1}))
}
)");
  const auto* tuple = as<TupleNode>(body_of(mod));
  auto times = [](Pattern constant) { return is_call(is_op("multiply"), {wildcard(), std::move(constant)}); };
  EXPECT_TRUE(match(times(is_constant_all(1)), tuple->fields[0]));
  EXPECT_TRUE(match(times(is_constant_all(1)), tuple->fields[1]));
  EXPECT_FALSE(match(times(is_constant_all(1)), tuple->fields[2]));
  EXPECT_FALSE(match(times(is_constant_all(2)), tuple->fields[1]));
  EXPECT_FALSE(match(times(is_scalar_constant()), tuple->fields[0]));  // rank 1
  EXPECT_TRUE(match(times(is_scalar_constant()), tuple->fields[1]));
  EXPECT_TRUE(match(times(is_scalar_constant(1)), tuple->fields[1]));
  EXPECT_FALSE(match(times(is_scalar_constant(2)), tuple->fields[1]));
  // A condition sees the expression its inner pattern matched, and only one that matched.
  int asked = 0;
  Pattern rank_one = satisfies(times(is_constant()), "rank 1", [&](const Expr& e) {
    ++asked;
    return as_tensor(e->checked_type())->ndim() == 1;
  });
  EXPECT_TRUE(match(rank_one, tuple->fields[0]));
  EXPECT_FALSE(match(rank_one, mod.lookup("main")->params[0]));  // not a multiply: not asked
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(match(satisfies(wildcard(), "never", [](const Expr&) { return false; }), tuple->fields[0]));
  EXPECT_THROW(satisfies(wildcard(), "nothing", nullptr), Error);
}

TEST(Pattern, RefusesPatternsThatCouldNeverMatch) {
  EXPECT_THROW(is_op("nn.rlu"), Error);
  try {
    has_attrs(is_call(is_op("sum"), {wildcard()}), {{"axes", std::vector<int64_t>{1}}});
    FAIL() << "an attribute sum does not have was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("operator 'sum' has no attribute 'axes'"), std::string::npos) << e.message();
  }
}

TEST(Pattern, PrintsAsItsPythonSpelling) {
  Pattern p = has_type(either(is_call(is_op("nn.relu"), {wildcard()}), is_constant()), DType::kFloat32,
                       std::vector<int64_t>{2});
  EXPECT_EQ(pattern_to_string(p),
            "(is_op(\"nn.relu\")(wildcard()) | is_constant()).has_dtype(\"float32\").has_shape((2,))");
  Pattern values = is_call(is_op("add"), {is_constant_all(0), is_scalar_constant(1e-05)});
  EXPECT_EQ(pattern_to_string(satisfies(values, "small", [](const Expr&) { return true; })),
            "is_op(\"add\")(is_constant_all(0), is_scalar_constant(1e-05)).satisfies(\"small\")");
  EXPECT_EQ(pattern_to_string(is_scalar_constant()), "is_scalar_constant()");
}

// relu(x) -> maximum(x, 0f), the replacement stating no device or span.
RewriteCallback relu_to_maximum() {
  Pattern x = wildcard();
  return {.pattern = is_call(is_op("nn.relu"), {x}),
          .rewrite = [x](const Expr&, const Expr&, const MatchMap& m) {
            return Expr(make_op_call("maximum", {m.at(x.get()), make_scalar_f32(0)}));
          }};
}

// The new constant inside the replacement gets the span but no device: the
// pass infrastructure's re-plan places it (device/place_new_nodes.h).
TEST(PatternRewrite, ReplacementsKeepTheReplacedNodesDeviceAndSpan) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(2, 3), float32] @cpu:0) -> Tensor[(2, 3), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = nn.relu(%0) @cpu:1;
  %2 = 2f @cpu:1;
  multiply(%1, %2) @cpu:1
}
)");
  Span relu_span = calls_of(mod, "nn.relu").at(0)->span();
  IRModule out = rewrite({relu_to_maximum()}, mod);
  expect_module(infer_type(out), R"(
def @main(%x: Tensor[(2, 3), float32] @cpu:0) -> Tensor[(2, 3), float32] @cpu:1 {
  %0 = device_copy(%x, src="cpu:0", dst="cpu:1") @cpu:1;
  %1 = maximum(%0, 0f) @cpu:1;
  %2 = 2f @cpu:1;
  multiply(%1, %2) @cpu:1
}
)");
  std::vector<Expr> maximum = calls_of(out, "maximum");
  ASSERT_EQ(maximum.size(), 1u);
  EXPECT_EQ(span_positions(maximum[0]->span()), span_positions(relu_span));
  EXPECT_EQ(span_positions(as<CallNode>(maximum[0])->args[1]->span()), span_positions(relu_span));
  EXPECT_TRUE(out.device_planned());
}

TEST(PatternRewrite, RepeatsUntilNothingChanges) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  negative(negative(negative(negative(%x))))
}
)");
  Pattern x = wildcard();
  RewriteCallback double_negation{
      .pattern = is_call(is_op("negative"), {is_call(is_op("negative"), {x})}),
      .rewrite = [x](const Expr&, const Expr&, const MatchMap& m) { return m.at(x.get()); }};
  expect_module(rewrite({double_negation}, mod), R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %x
}
)");
}

TEST(PatternRewrite, ACallbackThatNeverSettlesIsNamed) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  nn.relu(%x)
}
)");
  Pattern x = wildcard();
  RewriteCallback again{.pattern = is_call(is_op("nn.relu"), {x}),
                        .rewrite = [x](const Expr&, const Expr&, const MatchMap& m) {
                          return Expr(make_op_call("nn.relu", {m.at(x.get())}));
                        }};
  try {
    rewrite({again}, mod);
    FAIL() << "a rewrite that never settles returned";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("is_op(\"nn.relu\")(wildcard())"), std::string::npos) << e.message();
  }
  again.rewrite_once = true;
  EXPECT_EQ(calls_of(rewrite({again}, mod), "nn.relu").size(), 1u);
}

TEST(PatternRewrite, AReplacementThatGrowsEveryRoundStopsAtTheLimit) {
  // relu(x) -> relu(relu(x)) doubles the relus each round: the hundredth
  // round never came. The replacements are bounded by what 100 rounds over
  // the input would make, and the guard below turns a runaway into a failure.
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  nn.relu(%x)
}
)");
  Pattern x = wildcard();
  int calls = 0;
  RewriteCallback doubles{.pattern = is_call(is_op("nn.relu"), {x}),
                          .rewrite = [&calls](const Expr&, const Expr& post, const MatchMap&) {
                            if (++calls > 100000) throw std::runtime_error("the rewrite ran away");
                            return Expr(make_op_call("nn.relu", {post}));
                          },
                          .name = "Doubles"};
  try {
    rewrite({doubles}, mod);
    FAIL() << "a rewrite that never settles returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("Doubles"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("is_op(\"nn.relu\")(wildcard())"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("100 rounds"), std::string::npos) << e.message();
  }
  EXPECT_LE(calls, 1000);
}

TEST(PatternRewrite, RequireTypeTypesTheExpressionFirst) {
  // Built without InferType: the relu has no checked_type until the rewrite
  // infers it, so only the typed sweep sees a float32 relu.
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Function fn = make_function({x}, make_op_call("nn.relu", {x}));
  RewriteCallback callback = relu_to_maximum();
  callback.pattern = has_type(callback.pattern, DType::kFloat32, std::nullopt);
  auto relu_count = [](const Expr& e) {
    int n = 0;
    post_order_visit(e, [&](const Expr& node) { n += as_op_call(node, "nn.relu") != nullptr; });
    return n;
  };
  EXPECT_EQ(relu_count(rewrite({callback}, fn)), 1);
  callback.require_type = true;
  EXPECT_EQ(relu_count(rewrite({callback}, fn)), 0);
}

}  // namespace pattern_test
}  // namespace switchyard::testing
