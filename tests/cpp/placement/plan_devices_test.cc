// Device planning rules, each with its expected placed IR, copy counts,
// conflicts with the spans they name, rules and explanations.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "op/registry.h"
#include "placement/explain.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/infer_type.h"
#include "transform/instruments.h"

namespace switchyard {
namespace plan_devices_test {

const CompilationConfig& two_cpus() {
  static const CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  return config;
}

IRModule parse(const std::string& text) { return infer_type(parse_module(text, "test.sy")); }

IRModule plan(const std::string& text, const CompilationConfig& config = two_cpus()) {
  IRModule planned = plan_devices(parse(text), config).module;
  InvariantChecker checker;
  checker.check(planned, "PlanDevices");  // every planned module satisfies the invariants
  return planned;
}

int count_copies(const IRModule& mod) {
  int n = 0;
  for (const auto& [name, fn] : mod.functions())
    post_order_visit(fn, [&](const Expr& e) { n += as_op_call(e, "device_copy") != nullptr; });
  return n;
}

void expect_planned_as(const std::string& input, const std::string& expected) {
  IRModule got = plan(input);
  IRModule want = parse_module(expected, "expected.sy");
  auto diff = structural_diff(got, want, {.compare_devices = true, .compare_spans = false});
  EXPECT_FALSE(diff.has_value()) << *diff << "\n--- got:\n" << print_module(got);
}

TEST(PlanDevices, SharedMlpExampleMatchesThePlannedFile) {
  std::string dir = testing::example_models_dir();
  IRModule got = plan_devices(infer_type(parse_file(dir + "/mlp_two_devices.sy")), two_cpus()).module;
  IRModule want = parse_file(dir + "/mlp_two_devices.planned.sy");
  auto diff = structural_diff(got, want, {.compare_devices = true, .compare_spans = false});
  EXPECT_FALSE(diff.has_value()) << *diff << "\n--- got:\n" << print_module(got);
  EXPECT_EQ(count_copies(got), 1);
}

TEST(PlanDevices, NothingConstrainedGoesToTheDefaultDevice) {
  expect_planned_as(R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  nn.relu(%x)
})",
                    R"(
def @main(%x: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:0 {
  nn.relu(%x) @cpu:0
})");
}

TEST(PlanDevices, DefaultDeviceFromTheConfig) {
  IRModule got = plan(R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  nn.relu(%x)
})",
                      CompilationConfig::parse("cpu:0,cpu:1", "cpu:1"));
  EXPECT_EQ(got.lookup("main")->virtual_device(), VirtualDevice::parse("cpu:1"));
}

TEST(PlanDevices, FreeComputationFollowsItsOnlyWish) {
  // The input arrives on cpu:1: everything runs there, no copy.
  expect_planned_as(R"(
def @main(%x: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] {
  %0 = exp(%x);
  nn.relu(%0)
})",
                    R"(
def @main(%x: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] @cpu:1 {
  %0 = exp(%x) @cpu:1;
  nn.relu(%0) @cpu:1
})");
}

TEST(PlanDevices, OutputWishCopiesTheSmallerValue) {
  // x (1024 floats) is on cpu:0, the result (4 floats after the sum) is
  // wanted on cpu:1: the sum runs on cpu:0 and only its result is copied.
  IRModule got = plan(R"(
def @main(%x: Tensor[(4, 256), float32] @cpu:0) -> Tensor[(4), float32] @cpu:1 {
  %0 = exp(%x);
  sum(%0, axis=[1])
})");
  EXPECT_EQ(count_copies(got), 1);
  const CallNode* copy = as_op_call(got.lookup("main")->body, "device_copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(type_nbytes(copy->checked_type()), 16);
  EXPECT_TRUE(as_op_call(copy->args[0], "sum"));
  EXPECT_EQ(copy->args[0]->virtual_device(), VirtualDevice::parse("cpu:0"));
}

TEST(PlanDevices, OneCopyServesEveryConsumerOnTheOtherDevice) {
  IRModule got = plan(R"(
def @main(%x: Tensor[(8), float32] @cpu:0, %y: Tensor[(8), float32] @cpu:1) -> Tensor[(8), float32] @cpu:1 {
  %0 = exp(%x);
  %1 = add(%0, %y);
  %2 = multiply(%0, %y);
  %3 = add(%1, %2);
  subtract(%3, %0)
})");
  // %0 (from cpu:0) is consumed three times on cpu:1: one copy.
  EXPECT_EQ(count_copies(got), 1);
}

TEST(PlanDevices, ConstantsAreDuplicatedNotCopied) {
  IRModule got = plan(R"(
def @main(%x: Tensor[(4), float32] @cpu:0, %y: Tensor[(4), float32] @cpu:1) -> (Tensor[(4), float32], Tensor[(4), float32]) {
  %0 = add(%x, 2f);
  %1 = add(%y, 2f);
  (%0, %1)
})");
  EXPECT_EQ(count_copies(got), 0);
  std::set<const VirtualDevice*> constant_devices;
  post_order_visit(got.lookup("main"), [&](const Expr& e) {
    if (is<ConstantNode>(e)) constant_devices.insert(e->virtual_device());
  });
  EXPECT_EQ(constant_devices.size(), 2u);
}

TEST(PlanDevices, TupleHoldsValuesOnDifferentDevicesWithoutCopies) {
  IRModule got = plan(R"(
def @main(%a: Tensor[(4), float32] @cpu:0, %b: Tensor[(4), float32] @cpu:1) -> (Tensor[(4), float32], Tensor[(4), float32]) {
  %0 = exp(%a);
  %1 = exp(%b);
  %2 = (%0, %1);
  %3 = %2.1;
  %4 = nn.relu(%3);
  (%0, %4)
})");
  EXPECT_EQ(count_copies(got), 0);
}

TEST(PlanDevices, ExplicitDeviceCopyIsKept) {
  IRModule got = plan(R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %0 = exp(%x);
  %1 = device_copy(%0, src="cpu:0", dst="cpu:1");
  nn.relu(%1)
})");
  EXPECT_EQ(count_copies(got), 1);
  const Function& main = got.lookup("main");
  EXPECT_EQ(main->virtual_device(), VirtualDevice::parse("cpu:1"));
  EXPECT_EQ(main->params[0]->virtual_device(), VirtualDevice::parse("cpu:0"));
}

TEST(PlanDevices, IfConditionIsReadOnTheHost) {
  IRModule got = plan(R"(
def @main(%c: bool @cpu:1, %x: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] {
  if (%c) { exp(%x) } else { negative(%x) }
})",
                      CompilationConfig::parse("cpu:0,cpu:1", "", "cpu:0"));
  // The condition crosses to the host; the branches stay with their input.
  EXPECT_EQ(count_copies(got), 1);
  const IfNode* i = as<IfNode>(got.lookup("main")->body);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->cond->virtual_device(), VirtualDevice::parse("cpu:0"));
  EXPECT_EQ(i->virtual_device(), VirtualDevice::parse("cpu:1"));
}

TEST(PlanDevices, GlobalFunctionsArePlacedConsistentlyWithCopiesAtCallSites) {
  IRModule got = plan(R"(
def @scale(%v: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] {
  multiply(%v, 2f)
}

def @main(%a: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:0 {
  %0 = @scale(%a);
  @scale(%0)
})");
  const Function& scale = got.lookup("scale");
  EXPECT_EQ(scale->virtual_device(), VirtualDevice::parse("cpu:1"));
  // Both calls pass their argument to cpu:1; the final result comes back.
  EXPECT_EQ(count_copies(got), 2);
}

TEST(PlanDevices, HigherOrderFunctionValuesShareTheirPlacement) {
  IRModule got = plan(R"(
def @twice(%f: fn (Tensor[(4), float32]) -> Tensor[(4), float32], %v: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %f(%f(%v))
}

def @main(%a: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] {
  @twice(fn (%u: Tensor[(4), float32]) -> Tensor[(4), float32] { exp(%u) }, %a)
})");
  EXPECT_EQ(count_copies(got), 0);
  EXPECT_EQ(got.lookup("main")->virtual_device(), VirtualDevice::parse("cpu:1"));
}

TEST(PlanDevices, ForDeviceSharedExampleFormsPlans) {
  // Every form of the text IR plans and satisfies the invariants.
  IRModule mod = infer_type(parse_file(testing::example_models_dir() + "/forms.sy"));
  IRModule got = plan_devices(mod, two_cpus()).module;
  InvariantChecker checker;
  EXPECT_NO_THROW(checker.check(got, "PlanDevices"));
}

TEST(PlanDevices, ConflictNamesBothSpansAndThePath) {
  // The input arrives on cpu:1, but a device_copy reads it from cpu:0 (through
  // a let, so the path has a node in between).
  std::string text =
      "def @main(%x: Tensor[(4), float32] @cpu:1) -> Tensor[(4), float32] {\n"
      "  let %y = %x;\n"
      "  device_copy(%y, src=\"cpu:0\", dst=\"cpu:1\")\n"
      "}\n";
  try {
    plan_devices(parse(text), two_cpus());
    FAIL() << "expected a placement conflict";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    std::string msg = e.message();
    EXPECT_NE(msg.find("test.sy:1:11"), std::string::npos) << msg;  // the parameter's wish
    EXPECT_NE(msg.find("test.sy:3:3"), std::string::npos) << msg;   // the device_copy
    EXPECT_NE(msg.find("parameter %x (test.sy:1:11)"), std::string::npos) << msg;  // the path between them
  }
}

TEST(PlanDevices, UnknownDeviceInAWishIsAnError) {
  try {
    plan_devices(parse("def @main(%x: Tensor[(4), float32] @cpu:7) -> Tensor[(4), float32] { exp(%x) }"),
                 two_cpus());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    EXPECT_NE(e.message().find("cpu:7"), std::string::npos);
    EXPECT_EQ(e.span().line(), 1u);
  }
}

TEST(PlacementRules, OperatorAndNodeRules) {
  IRModule mod = parse(R"(
def @main(%x: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:0 {
  %0 = exp(%x);
  %1 = nn.softmax(%0);
  nn.relu(%1)
})");
  CompilationConfig config = two_cpus();
  std::vector<PlacementRule> rules = {parse_placement_rule("op:nn.softmax=cpu:1", config)};
  RuleApplication applied = apply_placement_rules(mod, rules);
  EXPECT_EQ(applied.matches[0], 1);
  IRModule got = plan_devices(infer_type(applied.module), config).module;
  EXPECT_EQ(count_copies(got), 2);  // to the softmax and back
  rules = {parse_placement_rule("node:test.sy:4:*=cpu:1", config)};
  applied = apply_placement_rules(mod, rules);
  EXPECT_EQ(applied.matches[0], 1);  // the relu on line 4
  EXPECT_THROW(parse_placement_rule("op:no.such.op=cpu:1", config), Error);
  EXPECT_THROW(parse_placement_rule("op:exp=cpu:9", config), Error);
  EXPECT_THROW(parse_placement_rule("exp=cpu:1", config), Error);
}

TEST(PlanDevices, OperatorsATargetCannotRunFallBackToTheHost) {
  // CUDA runs no batch_norm: it lands on the host, with a warning naming
  // it, and its input is copied there; the exp after it, which CUDA runs,
  // stays with it on the host (a copy back would cost more).
  CompilationConfig config = CompilationConfig::parse("cpu:0,cuda:0");
  PlanResult plan = plan_devices(parse(R"(
def @main(%x: Tensor[(1, 4), float32] @cuda:0, %s: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.batch_norm(%x, %s, %s, %s, %s);
  exp(%0.0)
})"),
                                 config);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("test.sy:3:8"), std::string::npos) << plan.warnings[0];
  EXPECT_NE(plan.warnings[0].find("'nn.batch_norm' cannot run on cuda:0"), std::string::npos) << plan.warnings[0];
  EXPECT_EQ(plan.module.lookup("main")->body->virtual_device(), VirtualDevice::parse("cpu:0"));
  EXPECT_EQ(count_copies(plan.module), 1);
}

TEST(PlanDevices, ElementwiseOperatorsAndReductionsStayOnCuda) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cuda:0");
  PlanResult plan = plan_devices(parse(R"(
def @main(%x: Tensor[(4, 8), float32] @cuda:0) -> Tensor[(4), float32] @cuda:0 {
  sum(exp(%x), axis=[1])
})"),
                                 config);
  EXPECT_TRUE(plan.warnings.empty());
  EXPECT_EQ(plan.module.lookup("main")->body->virtual_device(), VirtualDevice::parse("cuda:0"));
  EXPECT_EQ(count_copies(plan.module), 0);
}

TEST(PlanDevices, ThePassReportsEachFallbackToItsContextsDiagnostics) {
  IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4), float32] @cuda:0, %s: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.batch_norm(%x, %s, %s, %s, %s);
  %0.0
})");
  PassContext ctx;
  PlanDevices(CompilationConfig::parse("cpu:0,cuda:0"))(mod, ctx);
  std::vector<DiagnosticSink::Diagnostic> reported = ctx.diagnostics->diagnostics();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].pass, "PlanDevices");
  EXPECT_NE(reported[0].text.find("test.sy:3:8: warning: 'nn.batch_norm' cannot run on cuda:0"), std::string::npos)
      << reported[0].text;
}

TEST(PlanDevices, OperatorWishedOntoATargetThatCannotRunItIsAnError) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cuda:0");
  IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4), float32], %s: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.batch_norm(%x, %s, %s, %s, %s);
  %0.0
})");
  IRModule placed = apply_placement_rules(mod, {parse_placement_rule("op:nn.batch_norm=cuda:0", config)}).module;
  try {
    plan_devices(infer_type(placed), config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPlacement);
    EXPECT_NE(e.message().find("cannot run it"), std::string::npos) << e.message();
    EXPECT_EQ(e.span().line(), 3u);
  }
}

TEST(Explain, ChainLeadsFromTheWishToTheNode) {
  std::string dir = testing::example_models_dir();
  std::string text = testing::read_file(dir + "/mlp_two_devices.sy");
  PlanResult plan = plan_devices(infer_type(parse_module(text, "mlp_two_devices.sy")), two_cpus());
  std::vector<PlaceId> ids = select_place_nodes(plan.graph, "%4", text);
  ASSERT_EQ(ids.size(), 1u);
  std::string why = explain_place_node(plan, ids[0], two_cpus());
  EXPECT_NE(why.find("nn.dense"), std::string::npos) << why;
  EXPECT_NE(why.find("cpu:1"), std::string::npos) << why;
  EXPECT_NE(why.find("on_device"), std::string::npos) << why;
  ids = select_place_nodes(plan.graph, "%0", text);
  ASSERT_EQ(ids.size(), 1u);
  why = explain_place_node(plan, ids[0], two_cpus());
  EXPECT_NE(why.find("parameter %x arrives on cpu:0"), std::string::npos) << why;
  EXPECT_NE(why.find("instead"), std::string::npos) << why;  // the cost of the alternative
}

TEST(PlanDevices, MillionNodeChainPlansWithoutRecursion) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32), {.virtual_device = VirtualDevice::parse("cpu:0")});
  Expr e = x;
  for (int i = 0; i < 1000000; ++i) {
    e = make_op_call("negative", {e});
    if (i == 500000) e = make_op_call("on_device", {e}, {{"device", "cpu:1"}});
  }
  IRModule mod;
  mod.add("main", make_function({x}, e));
  IRModule got = plan_devices(infer_type(mod), two_cpus()).module;
  EXPECT_EQ(count_copies(got), 1);
}

}  // namespace plan_devices_test
}  // namespace switchyard
