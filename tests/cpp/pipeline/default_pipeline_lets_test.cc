// The default pipeline on let-bound values: they fuse as graph bindings do
// (FuseOps joins a producer only to a call that uses it directly, so each
// let-bound value was a kernel of its own), and the result is unchanged.
#include <gtest/gtest.h>

#include "interp/evaluate.h"
#include "ir/functor.h"
#include "pipeline/pass_table.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace default_pipeline_lets_test {

// The operator calls in each primitive function @main calls.
std::vector<size_t> fused_group_sizes(const IRModule& mod) {
  std::vector<size_t> sizes;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    const FunctionNode* fn = call ? as<FunctionNode>(call->op) : nullptr;
    if (!fn || !fn->is_primitive()) return;
    size_t ops = 0;
    post_order_visit(fn->body, [&](const Expr& inner) { ops += is<CallNode>(inner); });
    sizes.push_back(ops);
  });
  return sizes;
}

std::string let_chain(int length) {
  std::string text = "def @main(%x: Tensor[(4), float32]) {\n";
  std::string previous = "%x";
  for (int i = 0; i < length; ++i) {
    text += "  let %v" + std::to_string(i) + " = add(" + previous + ", 1f);\n";
    previous = "%v" + std::to_string(i);
  }
  return text + "  " + previous + "\n}\n";
}

TEST(DefaultPipelineLets, ALetChainFusesIntoGroupsOfTheGroupLimit) {
  IRModule mod = parse_module(let_chain(1000), "lets.sy");
  PassContext ctx;
  IRModule out = default_pipeline({.config = CompilationConfig::parse("cpu:0")})(mod, ctx);
  EXPECT_EQ(fused_group_sizes(out), (std::vector<size_t>{256, 256, 256, 232}));
  NDArray x(DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) x.set_from_double(i, double(i));
  Value result = evaluate(out, {{"x", x}});
  ASSERT_TRUE(result.is_tensor());
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(result.tensor.get_as_double(i), double(i + 1000));
}

// A value bound once and used twice stays one computation; one used only
// inside a branch is computed there.
TEST(DefaultPipelineLets, SharedAndBranchLocalValuesKeepTheirResults) {
  const char* text = R"(
def @main(%x: Tensor[(4), float32], %c: bool) {
  let %a = exp(%x);
  let %b = negative(%x);
  let %d = add(%a, %a);
  if (%c) { multiply(%d, %b) } else { %d }
}
)";
  IRModule mod = parse_module(text, "shared.sy");
  PassContext ctx;
  IRModule out = default_pipeline({.config = CompilationConfig::parse("cpu:0")})(mod, ctx);
  NDArray x(DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) x.set_from_double(i, double(i) - 1.5);
  for (bool c : {false, true}) {
    NDArray condition(DType::kBool, {});
    condition.set_from_double(0, c);
    Value want = evaluate(infer_type(mod), {{"x", x}, {"c", condition}});
    Value got = evaluate(out, {{"x", x}, {"c", condition}});
    ASSERT_TRUE(got.is_tensor() && want.is_tensor());
    EXPECT_TRUE(got.tensor.bitwise_equal(want.tensor)) << "c=" << c;
  }
}

}  // namespace default_pipeline_lets_test
}  // namespace switchyard
