// SimplifyExpr's rules, one case each: the rule that fires on a small input
// and what it leaves; every rule must have a case here.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "pass_test_util.h"
#include "transform/simplify_rules.h"

namespace switchyard::testing {
namespace simplify_rules_test {

struct RuleCase {
  std::string rule;
  std::string signature;  // "(params) -> result type"
  std::string before, after;  // bodies of @main
};

std::string module_text(const std::string& signature, const std::string& body) {
  return "def @main" + signature + " {\n" + body + "\n}\n";
}

const std::string kMatrix = "(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]";
const std::string kOnes = "Tensor[(3), float32]{1, 1, 1}";
const std::string kZeros = "Tensor[(3), float32]{0, 0, 0}";
const std::string kNorm = "nn.layer_norm(%x, " + kOnes + ", " + kZeros + ", axis=-1, epsilon=0.125f)";

const std::vector<RuleCase>& rule_cases() {
  static const std::vector<RuleCase> cases = {
      {"layer_norm", kMatrix,
       "  %0 = mean(%x, axis=[-1], keepdims=True);\n  %1 = subtract(%x, %0);\n  %2 = power(%1, 2f);\n"
       "  %3 = mean(%2, axis=[1], keepdims=True);\n  %4 = add(0.125f, %3);\n  divide(%1, sqrt(%4))",
       "  " + kNorm},
      {"layer_norm_scale", kMatrix, "  multiply(Tensor[(3), float32]{0.5, 2, -1}, " + kNorm + ")",
       "  nn.layer_norm(%x, Tensor[(3), float32]{0.5, 2, -1}, " + kZeros + ", axis=-1, epsilon=0.125f)"},
      {"layer_norm_shift", kMatrix,
       "  %0 = nn.layer_norm(%x, Tensor[(3), float32]{0.5, 2, -1}, " + kZeros +
           ", axis=-1, epsilon=0.125f);\n  add(%0, Tensor[(3), float32]{1, 0, 3})",
       "  nn.layer_norm(%x, Tensor[(3), float32]{0.5, 2, -1}, Tensor[(3), float32]{1, 0, 3}, axis=-1, "
       "epsilon=0.125f)"},
      {"add_zero", kMatrix, "  add(%x, 0f)", "  %x"},
      {"zero_add", kMatrix, "  add(-0f, %x)", "  %x"},
      {"multiply_one", kMatrix, "  multiply(%x, " + kOnes + ")", "  %x"},
      {"one_multiply", kMatrix, "  multiply(1f, %x)", "  %x"},
      {"subtract_zero", kMatrix, "  subtract(%x, 0f)", "  %x"},
      {"divide_one", kMatrix, "  divide(%x, 1f)", "  %x"},
      {"double_negative", kMatrix, "  negative(negative(%x))", "  %x"},
      {"cast_to_same_type", kMatrix, "  cast(%x, dtype=\"float32\")", "  %x"},
      {"clip_of_relu", kMatrix, "  clip(nn.relu(%x), a_min=0f, a_max=6f)", "  clip(%x, a_min=0f, a_max=6f)"},
      {"broadcast_to_same_shape", kMatrix, "  broadcast_to(%x, shape=[2, 3])", "  %x"},
      {"view_to_same_shape", kMatrix, "  squeeze(%x)", "  %x"},
      {"views_to_source_shape", kMatrix, "  %0 = reshape(%x, newshape=[6]);\n  reshape(%0, newshape=[2, -1])",
       "  %x"},
      {"view_of_view", "(%x: Tensor[(2, 3), float32]) -> Tensor[(1, 6), float32]",
       "  %0 = reshape(%x, newshape=[6]);\n  expand_dims(%0, axis=0)", "  reshape(%x, newshape=[1, 6])"},
      {"transpose_of_transpose", "(%x: Tensor[(2, 3, 4), float32]) -> Tensor[(4, 3, 2), float32]",
       "  %0 = transpose(%x, axes=[1, 2, 0]);\n  transpose(%0, axes=[1, 0, 2])", "  transpose(%x, axes=[2, 1, 0])"},
      {"identity_transpose", kMatrix, "  transpose(%x, axes=[0, -1])", "  %x"},
      {"unit_transpose", "(%x: Tensor[(1, 3, 1, 4), float32]) -> Tensor[(3, 1, 4, 1), float32]",
       "  transpose(%x, axes=[1, 2, 3, 0])", "  reshape(%x, newshape=[3, 1, 4, 1])"},
      {"product_of_transposed",
       "(%q: Tensor[(4, 8, 2), float32], %k: Tensor[(8, 4, 2), float32]) -> Tensor[(4, 8, 8), float32]",
       "  %0 = transpose(%k, axes=[1, 2, 0]);\n  matmul(%q, %0)",
       "  %0 = transpose(%k, axes=[1, 0, 2]);\n  nn.batch_matmul(%q, %0, transpose_a=False, transpose_b=True)"},
  };
  return cases;
}

class SimplifyRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(SimplifyRule, FiresOnceAndLeavesTheSimplerForm) {
  const RuleCase& c = GetParam();
  IRModule mod = typed(module_text(c.signature, c.before));
  std::vector<std::string> applied;
  Expr simpler = simplify_rules().apply(mod.lookup("main"), &applied);
  EXPECT_EQ(applied, std::vector<std::string>{c.rule});
  IRModule out = mod;
  out.add("main", downcast<FunctionNode>(simpler));
  expect_module(out, module_text(c.signature, c.after));
}

INSTANTIATE_TEST_SUITE_P(EachRule, SimplifyRule, ::testing::ValuesIn(rule_cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& info) { return info.param.rule; });

TEST(SimplifyRules, EveryRuleHasACaseAndAUniqueName) {
  std::set<std::string> covered, names;
  for (const RuleCase& c : rule_cases()) covered.insert(c.rule);
  for (const RewriteRule& rule : simplify_rules().rules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << "two rules are named " << rule.name;
    EXPECT_TRUE(covered.count(rule.name)) << "rule " << rule.name << " has no case in rule_cases()";
  }
  EXPECT_EQ(covered, names);
}

TEST(SimplifyRules, AProductOfATransposeReadsItByStrides) {
  auto applied_to = [](const std::string& signature, const std::string& body) {
    std::vector<std::string> applied;
    IRModule mod = typed(module_text(signature, body));
    IRModule out = mod;
    out.add("main", downcast<FunctionNode>(simplify_rules().apply(mod.lookup("main"), &applied)));
    return std::make_pair(applied, out);
  };
  // Swapping the last two axes is the whole transpose: none is left.
  const std::string batch = "(%a: Tensor[(1, 3, 5), float32], %b: Tensor[(2, 4, 5), float32]) -> Tensor[(2, 3, 4), float32]";
  auto [applied, out] = applied_to(batch, "  matmul(%a, transpose(%b, axes=[0, 2, 1]))");
  EXPECT_EQ(applied, std::vector<std::string>{"product_of_transposed"});
  expect_module(out, module_text(batch, "  nn.batch_matmul(%a, %b, transpose_a=False, transpose_b=True)"));
  // Not where the transpose keeps rows whole (the product would then gather
  // columns), nor for matrices (nn.batch_matmul is rank 3), nor across devices.
  EXPECT_TRUE(applied_to(batch, "  matmul(%a, transpose(%b, axes=[0, 2, 1]))").first.size() == 1);
  const std::string rows = "(%a: Tensor[(4, 3, 5), float32], %b: Tensor[(5, 4, 2), float32]) -> Tensor[(4, 3, 2), float32]";
  EXPECT_TRUE(applied_to(rows, "  matmul(%a, transpose(%b, axes=[1, 0, 2]))").first.empty());
  const std::string matrices = "(%a: Tensor[(3, 5), float32], %b: Tensor[(4, 5), float32]) -> Tensor[(3, 4), float32]";
  EXPECT_TRUE(applied_to(matrices, "  matmul(%a, transpose(%b, axes=[1, 0]))").first.empty());
  const std::string body = "  %0 = transpose(%b, axes=[0, 2, 1]) @cpu:1;\n  matmul(%a, %0)";
  EXPECT_TRUE(applied_to(batch, body).first.empty());
}

TEST(SimplifyRules, LayerNormNeedsASquareAPositiveEpsilonAndOneDevice) {
  const std::string written =
      "  %0 = mean(%x, axis=[-1], keepdims=True);\n  %1 = subtract(%x, %0);\n  %2 = power(%1, 2f);\n"
      "  %3 = mean(%2, axis=[-1], keepdims=True);\n  %4 = add(%3, 0.125f);\n  divide(%1, sqrt(%4))";
  auto folds = [](const std::string& signature, const std::string& body) {
    std::vector<std::string> applied;
    simplify_rules().apply(typed(module_text(signature, body)).lookup("main"), &applied);
    return std::find(applied.begin(), applied.end(), "layer_norm") != applied.end();
  };
  EXPECT_TRUE(folds(kMatrix, written));
  std::string cube = written, no_epsilon = written, not_last = written, elsewhere = written;
  cube.replace(cube.find("2f"), 2, "3f");
  no_epsilon.replace(no_epsilon.find("0.125f"), 6, "0f");
  not_last.replace(not_last.find("axis=[-1]"), 9, "axis=[0]");
  elsewhere.replace(elsewhere.find("sqrt(%4)"), 8, "sqrt(%4) @cpu:1");
  for (const std::string& body : {cube, no_epsilon, not_last, elsewhere})
    EXPECT_FALSE(folds(kMatrix, body)) << body;
  const std::string ints = "(%x: Tensor[(2, 3), int32]) -> Tensor[(2, 3), int32]";
  std::string integer = written;
  integer.replace(integer.find("2f"), 2, "2");
  integer.replace(integer.find("0.125f"), 6, "1");
  EXPECT_FALSE(folds(ints, integer));
}

}  // namespace simplify_rules_test
}  // namespace switchyard::testing
