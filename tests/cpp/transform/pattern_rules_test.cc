// Rule sets: malformed rules refused, the first rule with a replacement
// wins, a result is taken only when it keeps type and device, rules for any
// operator are tried in order with the rest, and one sweep works children first.
#include <gtest/gtest.h>

#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "transform/pattern_rules.h"

namespace switchyard::testing {
namespace pattern_rules_test {

Pattern op(const char* name, std::vector<Pattern> args) { return is_call(is_op(name), std::move(args)); }

std::vector<std::string> fired(const RuleSet& rules, const std::string& text) {
  std::vector<std::string> applied;
  rules.apply(typed(text).lookup("main"), &applied);
  return applied;
}

TEST(RuleSet, RefusesARuleWithoutNamePatternOrSingleReplacement) {
  Pattern x = wildcard();
  auto build = [](const Call&, const MatchMap&) { return Expr(); };
  for (RewriteRule rule : {replace_by("", op("negative", {x}), x), replace_by("no_pattern", Pattern(), x),
                           rebuild("nothing", op("negative", {x}), nullptr)}) {
    EXPECT_THROW(RuleSet({rule}), Error) << rule.name;
  }
  RewriteRule both = replace_by("both", op("negative", {x}), x);
  both.build = build;
  try {
    RuleSet({both});
    FAIL() << "a rule with both a result and a build function was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.message(), "rewrite rule 0 ('both') needs a name, a pattern, and either a result or a build function");
  }
}

TEST(RuleSet, TheFirstRuleThatGivesAReplacementWins) {
  // add(%x, 0) with %x (3) and 0 of (2, 3): taking %x would change the type,
  // so the rule gives nothing and the next one, by a build function, fires.
  Pattern x = wildcard(), zero = is_constant_all(0);
  RuleSet rules({replace_by("left", op("add", {x, zero}), x),
                 rebuild("right", op("add", {x, zero}),
                         [zero](const Call&, const MatchMap& m) { return m.at(zero.get()); }),
                 replace_by("never_tried", op("add", {x, zero}), x)});
  EXPECT_EQ(fired(rules, R"(
def @main(%x: Tensor[(3), float32]) -> Tensor[(2, 3), float32] {
  add(%x, Tensor[(2, 3), float32]{0, 0, 0, 0, 0, 0})
}
)"),
            std::vector<std::string>{"right"});
}

TEST(RuleSet, RulesForAnyOperatorAreTriedInOrderWithTheRest) {
  Pattern x = wildcard();
  Pattern any_float_call = has_type(is_call(wildcard(), {x}), DType::kFloat32, std::nullopt);
  RuleSet rules({replace_by("negative", op("negative", {x}), x), replace_by("any", any_float_call, x),
                 replace_by("relu", op("nn.relu", {x}), x)});
  EXPECT_EQ(rules.candidates("negative"), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(rules.candidates("nn.relu"), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(rules.candidates("sqrt"), (std::vector<size_t>{1}));
  EXPECT_EQ(fired(rules, R"(
def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  sqrt(nn.relu(negative(%x)))
}
)"),
            (std::vector<std::string>{"negative", "any", "any"}));
}

TEST(RuleSet, AResultOnAnotherDeviceIsNotTaken) {
  Pattern x = wildcard();
  RuleSet rules({replace_by("double_negative", op("negative", {op("negative", {x})}), x)});
  EXPECT_TRUE(fired(rules, R"(
def @main(%x: Tensor[(2), float32] @cpu:0) -> Tensor[(2), float32] {
  negative(negative(%x)) @cpu:1
}
)").empty());
}

TEST(RuleSet, SpelledOutCallsMustShareTheDeviceWildcardsNeedNot) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  %0 = nn.relu(%x) @cpu:1;
  (negative(negative(%0) @cpu:1) @cpu:0, negative(negative(%0) @cpu:0) @cpu:0)
}
)");
  Pattern x = wildcard();
  Pattern twice = op("negative", {op("negative", {x})});
  const auto* tuple = as<TupleNode>(mod.lookup("main")->body);
  for (int i = 0; i < 2; ++i) {
    MatchMap m;
    ASSERT_TRUE(match(twice, tuple->fields[size_t(i)], &m));
    EXPECT_EQ(spelled_out_calls_on_device_of(downcast<CallNode>(tuple->fields[size_t(i)]), m), i == 1);
  }
}

}  // namespace pattern_rules_test
}  // namespace switchyard::testing
