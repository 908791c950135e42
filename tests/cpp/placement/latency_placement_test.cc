// Device planning under --objective latency on real modules: branches split
// across equal devices, chains kept together, wishes and target support
// respected, and every bad cost file reported by what is wrong.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "placement/explain.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace latency_placement_test {

IRModule parse(const std::string& text) { return infer_type(parse_module(text, "test.sy")); }

// A cost file for every operator call of `typed` on `devices`, each costing
// `ms(operator)` on every device, and copies of 0.01 ms + 1 ms per 10 MB;
// on the first device with every core (`all_threads`) each costs
// `all_cores_share` of that.
CostFile costs_for(const IRModule& typed, const std::vector<std::string>& devices,
                   const std::function<double(const std::string&)>& ms, double all_cores_share = 1.0,
                   int all_threads = 2) {
  CostFile costs;
  costs.all_cores = AllCoresProfile{devices.front(), all_threads, 0, 0, {}};
  costs.machine = MachineIdentity::this_machine();
  costs.model = "test.sy";
  for (const std::string& d : devices) costs.devices.push_back({d, "cpu", 1});
  for (const auto& [name, fn] : typed.functions())
    post_order_visit(fn, [&](const Expr& e) {
      const CallNode* call = as<CallNode>(e);
      const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
      if (!op || op == on_device_op() || op == device_copy_op()) return;
      costs.operator_text[operator_cost_key(*call)] = operator_cost_text(*call);
      for (const std::string& d : devices) costs.operator_ms[{operator_cost_key(*call), d}] = ms(op->name);
      costs.all_cores->operator_ms[operator_cost_key(*call)] = ms(op->name) * all_cores_share;
    });
  for (const std::string& a : devices)
    for (const std::string& b : devices)
      if (a != b) costs.copies[{a, b}] = CopyCost{0.01, 1e-7};
  return costs;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

LatencyObjective objective(CostFile costs) { return {std::make_shared<CostFile>(std::move(costs)), "costs.json"}; }

const VirtualDevice* device_at_line(const PlanResult& plan, uint32_t line) {
  for (size_t i = 0; i < plan.graph.nodes.size(); ++i) {
    const Expr& n = plan.graph.nodes[i].node;
    if (as<CallNode>(n) && n->span().line() == line) return plan.solution.device[i];
  }
  ADD_FAILURE() << "no call at line " << line;
  return nullptr;
}

// Lines 3-6 and 7-10 are two equal branches from %x; line 11 joins them.
constexpr const char* kTwoBranches = R"(
def @main(%x: Tensor[(64, 256), float32], %a: Tensor[(256, 256), float32], %b: Tensor[(256, 256), float32]) -> Tensor[(64, 256), float32] {
  %0 = nn.dense(%x, %a);
  %1 = nn.relu(%0);
  %2 = nn.dense(%1, %a);
  %3 = tanh(%2);
  %4 = nn.dense(%x, %b);
  %5 = nn.relu(%4);
  %6 = nn.dense(%5, %b);
  %7 = tanh(%6);
  add(%3, %7)
})";

double dense_heavy(const std::string& op) { return op == "nn.dense" ? 1.0 : 0.1; }

TEST(LatencyPlacement, TwoEqualBranchesSplitAcrossTwoEqualDevices) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
  for (uint32_t line : {4, 5, 6}) EXPECT_EQ(device_at_line(plan, line), device_at_line(plan, 3));
  for (uint32_t line : {8, 9, 10}) EXPECT_EQ(device_at_line(plan, line), device_at_line(plan, 7));
  EXPECT_NE(device_at_line(plan, 3), device_at_line(plan, 7));
  // One branch (2.2 ms) plus the join and copies, well under both in turn (4.5 ms).
  EXPECT_LT(plan.solution.predicted_ms, 3.0);
  // The bytes objective keeps everything on the default device, as before.
  PlanResult bytes = plan_devices(mod, config);
  for (uint32_t line = 3; line <= 11; ++line) EXPECT_EQ(device_at_line(bytes, line), config.default_device);
  EXPECT_LT(bytes.solution.predicted_ms, 0);
}

// The choice between the split and one device with every core, on
// synthetic costs: two equal branches split when two threads gain little
// on each operator, stay together when they gain much, and the hand-off
// between queues counts against the split.
TEST(LatencyChoice, SplitWinsWhenEveryCoreGainsLittleOnEachOperator) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  // Two threads take 0.8 of one's time: one device 0.8 x 4.5 = 3.6 ms, the split 2.2 + join + copies.
  PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.8)));
  ASSERT_TRUE(plan.choice.has_value());
  EXPECT_FALSE(plan.choice->one_device);
  EXPECT_NEAR(plan.choice->one_device_ms, 3.6, 1e-9);
  EXPECT_LT(plan.choice->split_ms, 2.6);
  EXPECT_GE(plan.choice->handoffs, 2);  // %x to one branch, its result back
  EXPECT_NE(device_at_line(plan, 3), device_at_line(plan, 7));
  std::string text = latency_choice_text(*plan.choice);
  EXPECT_NE(text.find("cpu:0 with 2 threads, predicted 3.600 ms"), std::string::npos) << text;
  EXPECT_NE(text.find(": chose the split"), std::string::npos) << text;
  // And how the split was found: too many free nodes to try every
  // placement, so local search, proven optimal by branch and bound.
  EXPECT_NE(text.find("values crossing devices; optimal: branch and bound over "), std::string::npos) << text;
  EXPECT_NE(text.find(" partial placements): chose the split"), std::string::npos) << text;
}

TEST(LatencyChoice, OneDeviceWinsWhenEveryCoreHalvesEachOperator) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  // Two threads halve each operator: 2.25 ms on one device, against about 2.3 for the split.
  PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.5)));
  ASSERT_TRUE(plan.choice.has_value());
  EXPECT_TRUE(plan.choice->one_device);
  EXPECT_NEAR(plan.choice->one_device_ms, 2.25, 1e-9);
  EXPECT_NEAR(plan.solution.predicted_ms, 2.25, 1e-9);
  for (uint32_t line = 3; line <= 11; ++line) EXPECT_EQ(device_at_line(plan, line)->device_name(), "cpu:0");
  EXPECT_EQ(plan.solution.copies, 0);
  // The prediction is the all-cores one, and explain says why each node is there.
  EXPECT_NEAR(predict_times(plan.graph, config, *plan.latency, plan.solution.device).makespan_ms, 2.25, 1e-9);
  std::string why = explain_place_node(plan, select_place_nodes(plan.graph, "test.sy:7", "").at(0), config);
  EXPECT_NE(why.find("one device with every core (cpu:0, 2 threads) is predicted to run the model in 2.250 ms"),
            std::string::npos)
      << why;
  EXPECT_NE(latency_choice_text(*plan.choice).find(": chose one device"), std::string::npos);
}

TEST(LatencyChoice, HandoffBetweenQueuesCountsAgainstTheSplit) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.8);
  PlanResult cheap = plan_devices(mod, config, objective(costs));
  EXPECT_FALSE(cheap.choice->one_device);
  // Each value crossing devices now waits 1 ms for its queue to wake: the split loses.
  costs.handoff_ms = 1.0;
  PlanResult dear = plan_devices(mod, config, objective(costs));
  EXPECT_TRUE(dear.choice->one_device) << latency_choice_text(*dear.choice);
  EXPECT_GT(dear.choice->split_ms, 3.6);
}

TEST(LatencyChoice, RunOverheadIsPartOfThePrediction) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.5);
  costs.all_cores->overhead_ms = 0.4;
  costs.devices[0].overhead_ms = costs.devices[1].overhead_ms = 0.1;
  PlanResult plan = plan_devices(mod, config, objective(costs));
  EXPECT_NEAR(plan.choice->one_device_ms, 2.65, 1e-9);
  EXPECT_FALSE(plan.choice->one_device) << latency_choice_text(*plan.choice);
}

TEST(LatencyChoice, AWishOnAnotherDeviceLeavesOnlyTheSplit) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  std::vector<PlacementRule> rules = {parse_placement_rule("node:test.sy:7:*=cpu:1", config)};
  IRModule wished = infer_type(apply_placement_rules(mod, rules).module);
  PlanResult plan = plan_devices(wished, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.1)));
  EXPECT_FALSE(plan.choice->one_device);
  EXPECT_LT(plan.choice->one_device_ms, 0);
  EXPECT_NE(plan.choice->unavailable.find("is pinned on cpu:1"), std::string::npos) << plan.choice->unavailable;
  EXPECT_EQ(device_at_line(plan, 7)->device_name(), "cpu:1");
  // A build that decided on one device before planning is told why it cannot.
  LatencyObjective decided = objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 0.1));
  decided.one_device = true;
  EXPECT_NE(error_of([&] { plan_devices(wished, config, decided); }).find("chose one device with every core, but"),
            std::string::npos);
}

TEST(LatencyChoice, AllCoresTimesMissingForAnOperatorAreNamed) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy);
  for (auto it = costs.all_cores->operator_ms.begin(); it != costs.all_cores->operator_ms.end();)
    it = costs.operator_text.at(it->first).starts_with("tanh") ? costs.all_cores->operator_ms.erase(it) : std::next(it);
  std::string message = error_of([&] { plan_devices(mod, config, objective(costs)); });
  EXPECT_NE(message.find("tanh : (Tensor[(64, 256), float32]) -> Tensor[(64, 256), float32] on cpu:0 with all 2 threads"),
            std::string::npos)
      << message;
}

// A chain of four calls, lines 3-6.
constexpr const char* kChain = R"(
def @main(%x: Tensor[(64, 256), float32], %a: Tensor[(256, 256), float32]) -> Tensor[(64, 256), float32] {
  %0 = nn.dense(%x, %a);
  %1 = nn.relu(%0);
  %2 = nn.dense(%1, %a);
  tanh(%2)
})";

TEST(LatencyPlacement, ChainStaysOnOneDeviceTheDefault) {
  IRModule mod = parse(kChain);
  for (const char* default_device : {"cpu:0", "cpu:1"}) {
    CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1", default_device);
    PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
    for (uint32_t line = 3; line <= 6; ++line) EXPECT_EQ(device_at_line(plan, line), config.default_device);
    EXPECT_NEAR(plan.solution.predicted_ms, 2.2, 1e-9);
  }
}

// A chain plans on one device's own core (no hand-off) when the profile's
// every-core run was disturbed (each operator 1.5x its one-core time);
// the check runs both in turns, the times are calibrated to those runs,
// and the plan turns to one device with every core.
TEST(LatencyChoice, ACheckWithoutHandoffsCalibratesBothCandidatesToTheirRuns) {
  IRModule mod = parse(kChain);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy, 1.5);
  PlanResult disturbed = plan_devices(mod, config, objective(costs));
  ASSERT_FALSE(disturbed.choice->one_device);
  EXPECT_EQ(disturbed.choice->handoffs, 0);
  EXPECT_NEAR(disturbed.choice->split_ms, 2.2, 1e-9);
  EXPECT_NEAR(disturbed.choice->one_device_ms, 3.3, 1e-9);
  // In turns: cpu:0 on its core ran 2.4 ms, every core 1.8 ms.
  calibrate_to_check(&costs, {"cpu:0"}, 2.2, 2.4, 3.3, 1.8);
  EXPECT_EQ(costs.all_cores->run_ms, 1.8);
  PlanResult calibrated = plan_devices(mod, config, objective(costs));
  EXPECT_TRUE(calibrated.choice->one_device) << latency_choice_text(*calibrated.choice);
  EXPECT_NEAR(calibrated.choice->one_device_ms, 1.8, 1e-9);
  // cpu:1 was not in the run: its times stay; cpu:0's are what it ran.
  for (const auto& [key_device, ms] : costs.operator_ms) {
    const bool dense = costs.operator_text.at(key_device.first).starts_with("nn.dense");
    EXPECT_NEAR(ms, (dense ? 1.0 : 0.1) * (key_device.second == "cpu:0" ? 2.4 / 2.2 : 1.0), 1e-12);
  }
}

TEST(LatencyPlacement, RuleForPartOfTheModelLeavesTheRestToTheObjective) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  std::vector<PlacementRule> rules = {parse_placement_rule("node:test.sy:7:*=cpu:1", config)};
  IRModule wished = infer_type(apply_placement_rules(mod, rules).module);
  PlanResult plan = plan_devices(wished, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
  const VirtualDevice* cpu1 = VirtualDevice::parse("cpu:1");
  EXPECT_EQ(device_at_line(plan, 7)->device_name(), cpu1->device_name());
  for (uint32_t line : {8, 9, 10}) EXPECT_EQ(device_at_line(plan, line)->device_name(), "cpu:1");
  for (uint32_t line : {3, 4, 5, 6}) EXPECT_EQ(device_at_line(plan, line)->device_name(), "cpu:0");
  // With bytes, the one wish pulls everything onto cpu:1 (unchanged behaviour).
  PlanResult bytes = plan_devices(wished, config);
  for (uint32_t line = 3; line <= 11; ++line) EXPECT_EQ(device_at_line(bytes, line)->device_name(), "cpu:1");
}

TEST(LatencyPlacement, OperatorsATargetCannotRunStayOffIt) {
  // CUDA runs no batch_norm: however cheap the cost file says it is there,
  // it stays on the CPU, with no fallback warning.
  CompilationConfig config = CompilationConfig::parse("cpu:0,cuda:0");
  IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4), float32], %s: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.batch_norm(%x, %s, %s, %s, %s);
  exp(%0.0)
})");
  CostFile costs = costs_for(mod, {"cpu:0"}, [](const std::string&) { return 10.0; });
  costs.devices.push_back({"cuda:0", "cuda", 1});
  for (auto [key, text] : costs.operator_text) costs.operator_ms[{key, "cuda:0"}] = 0.001;
  costs.copies[{"cpu:0", "cuda:0"}] = costs.copies[{"cuda:0", "cpu:0"}] = CopyCost{0.001, 0};
  PlanResult plan = plan_devices(mod, config, objective(costs));
  EXPECT_EQ(device_at_line(plan, 3)->device_name(), "cpu:0");
  EXPECT_EQ(device_at_line(plan, 4)->device_name(), "cuda:0");
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(LatencyPlacement, ExplicitCopiesAndWishesNeedNoCost) {
  // device_copy and on_device compute nothing: no cost file holds them.
  IRModule mod = parse(R"(
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] {
  %0 = exp(%x);
  %1 = device_copy(%0, src="cpu:0", dst="cpu:1");
  %2 = on_device(nn.relu(%1), device="cpu:1");
  tanh(%2)
})");
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
  EXPECT_EQ(device_at_line(plan, 3)->device_name(), "cpu:0");
  EXPECT_NEAR(plan.solution.predicted_ms, 0.3 + 0.01 + 128 * 1e-7, 1e-9);
}

TEST(LatencyPlacement, ExplainSpeaksInTime) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  PlanResult plan = plan_devices(mod, config, objective(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
  std::vector<PlaceId> ids = select_place_nodes(plan.graph, "test.sy:7", "");
  ASSERT_FALSE(ids.empty());
  std::string text = explain_place_node(plan, ids[0], config);
  EXPECT_NE(text.find("shortest predicted run time"), std::string::npos) << text;
  EXPECT_NE(text.find("instead: compute 1.000 ms (here 1.000 ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("shorter with it here"), std::string::npos) << text;
  PredictedTimes times = predict_times(plan.graph, config, *plan.latency, plan.solution.device);
  std::string summary = predicted_times_text(times, plan.graph, config);
  EXPECT_NE(summary.find("cpu:1: compute 2.200 ms"), std::string::npos) << summary;
  EXPECT_NE(summary.find("critical path:"), std::string::npos) << summary;
}

TEST(LatencyPlacement, ExplainWeighsComputeAgainstCopies) {
  // cpu:1 runs the product four times faster; the input and result live on cpu:0.
  IRModule mod = parse(R"(
def @main(%x: Tensor[(64, 256), float32] @cpu:0, %a: Tensor[(256, 256), float32] @cpu:0) -> Tensor[(64, 256), float32] @cpu:0 {
  nn.dense(%x, %a)
})");
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy);
  for (auto& [key_device, ms] : costs.operator_ms)
    if (key_device.second == "cpu:1") ms /= 4;
  PlanResult plan = plan_devices(mod, config, objective(costs));
  ASSERT_EQ(device_at_line(plan, 3)->device_name(), "cpu:1");
  std::string text = explain_place_node(plan, select_place_nodes(plan.graph, "test.sy:3", "").at(0), config);
  // Copies: x (64 KiB) and a (256 KiB) in, the result (64 KiB) out, each 0.01 ms + 1e-7 ms per byte.
  EXPECT_NE(text.find("so cpu:1 saves 0.750 ms of compute for 0.069 ms of copy"), std::string::npos) << text;
}

TEST(LatencyPlacement, MissingOperatorsAreListedNotGuessed) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy);
  for (auto it = costs.operator_ms.begin(); it != costs.operator_ms.end();)
    it = costs.operator_text[it->first.first].starts_with("tanh") ? costs.operator_ms.erase(it) : std::next(it);
  std::string message = error_of([&] { plan_devices(mod, config, objective(costs)); });
  EXPECT_NE(message.find("costs.json has no time for these operators"), std::string::npos) << message;
  EXPECT_NE(message.find("tanh : (Tensor[(64, 256), float32]) -> Tensor[(64, 256), float32] on cpu:0 at test.sy:6:8"),
            std::string::npos) << message;
  EXPECT_EQ(message.find("nn.dense"), std::string::npos) << message;
}

TEST(LatencyPlacement, MissingDevicesAndCopiesAreNamed) {
  IRModule mod = parse(kTwoBranches);
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  std::string message = error_of([&] { plan_devices(mod, config, objective(costs_for(mod, {"cpu:0"}, dense_heavy))); });
  EXPECT_NE(message.find("device cpu:1 (the file measured cpu:0)"), std::string::npos) << message;
  EXPECT_NE(message.find("copies cpu:0 -> cpu:1"), std::string::npos) << message;
}

TEST(CostFile, RoundTripsThroughJson) {
  IRModule mod = parse(kTwoBranches);
  CostFile costs = costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy);
  costs.kernels.push_back({"00000000000000aa", "exp : () -> ()", "cpu:0", 0.5});
  costs.split_checks.push_back({4, 1.5, 2.5, 2.0, 0.25});
  CostFile back = parse_cost_file(cost_file_json(costs), "costs.json");
  ASSERT_EQ(back.split_checks.size(), 1u);
  EXPECT_EQ(back.split_checks[0].handoffs, 4);
  EXPECT_EQ(back.split_checks[0].predicted_ms, 1.5);
  EXPECT_EQ(back.split_checks[0].measured_ms, 2.5);
  EXPECT_EQ(back.split_checks[0].one_device_ms, 2.0);
  EXPECT_EQ(back.split_checks[0].charged_ms, 0.25);
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].operators, "exp : () -> ()");
  EXPECT_EQ(back.kernels[0].median_ms, 0.5);
  EXPECT_EQ(back.operator_ms, costs.operator_ms);
  EXPECT_EQ(back.operator_text, costs.operator_text);
  EXPECT_EQ(back.machine.cpu_model, costs.machine.cpu_model);
  EXPECT_EQ(back.copies.at({"cpu:0", "cpu:1"}).latency_ms, 0.01);
  EXPECT_EQ(back.devices.size(), 2u);
  ASSERT_TRUE(back.all_cores.has_value());
  EXPECT_EQ(back.all_cores->device, "cpu:0");
  EXPECT_EQ(back.all_cores->threads, 2);
  EXPECT_EQ(back.all_cores->operator_ms, costs.all_cores->operator_ms);
}

TEST(CostFile, KeysDependOnTypesAndAttributesNotSpans) {
  IRModule a = parse("def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4), float32] { sum(%x, axis=[1]) }");
  IRModule b = parse("def @main(%y: Tensor[(4, 8), float32]) -> Tensor[(4), float32] {\n  sum(%y, axis=[1])\n}");
  IRModule c = parse("def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(8), float32] { sum(%x, axis=[0]) }");
  auto key = [](const IRModule& m) { return operator_cost_key(*as<CallNode>(m.lookup("main")->body)); };
  EXPECT_EQ(key(a), key(b));
  EXPECT_NE(key(a), key(c));
  EXPECT_EQ(key(a).size(), 16u);
}

TEST(CostFile, BadFilesNameTheFileAndField) {
  EXPECT_NE(error_of([] { parse_cost_file("[1]", "c.json"); }).find("cost file c.json: not a JSON object"), std::string::npos);
  EXPECT_NE(error_of([] { parse_cost_file("{}", "c.json"); }).find("field 'format'"), std::string::npos);
  // Version 1 files lack the all-cores candidate and the hand-off: measured again, not guessed.
  std::string v1 = R"({"format": "switchyard-costs", "version": 1})";
  EXPECT_NE(error_of([&] { parse_cost_file(v1, "c.json"); }).find("version 1, this build reads version 2 (measure it again"),
            std::string::npos);
  std::string no_machine = R"({"format": "switchyard-costs", "version": 2})";
  EXPECT_NE(error_of([&] { parse_cost_file(no_machine, "c.json"); }).find("missing or mistyped field"), std::string::npos);
  EXPECT_NE(error_of([] { read_cost_file("/nonexistent/c.json"); }).find("cannot read the cost file /nonexistent/c.json"),
            std::string::npos);
}

// A field of a good file replaced by `value` (JSON), or removed when empty.
std::string cost_file_with(const std::string& field, const std::string& inner, const std::string& value) {
  IRModule mod = parse(kTwoBranches);
  nlohmann::json j = nlohmann::json::parse(cost_file_json(costs_for(mod, {"cpu:0", "cpu:1"}, dense_heavy)));
  nlohmann::json& at = inner.empty() ? j : j[field];
  const std::string& name = inner.empty() ? field : inner;
  if (value.empty()) at.erase(name);
  else at[name] = nlohmann::json::parse(value);
  return j.dump();
}

TEST(CostFile, BadAllCoresAndHandoffFieldsAreNamed) {
  auto error = [](const std::string& text) { return error_of([&] { parse_cost_file(text, "c.json"); }); };
  EXPECT_NE(error(cost_file_with("all_cores", "", "")).find("missing or mistyped field"), std::string::npos);
  EXPECT_NE(error(cost_file_with("handoff_ms", "", "-1")).find("cost file c.json: handoff_ms is negative"),
            std::string::npos);
  EXPECT_NE(error(cost_file_with("all_cores", "device", "\"cpu:7\""))
                .find("all_cores.device 'cpu:7' is none of the file's devices"),
            std::string::npos);
  EXPECT_NE(error(cost_file_with("all_cores", "threads", "0")).find("all_cores.threads is not a positive count"),
            std::string::npos);
  EXPECT_NE(error(cost_file_with("all_cores", "overhead_ms", "-0.5")).find("all_cores.overhead_ms is negative"),
            std::string::npos);
  // A file written before profile checked its splits has none; a bad one is named.
  EXPECT_EQ(parse_cost_file(cost_file_with("split_checks", "", ""), "c.json").split_checks.size(), 0u);
  EXPECT_NE(error(cost_file_with("split_checks", "",
                                 R"([{"handoffs": 2, "predicted_ms": 1, "measured_ms": -1, "one_device_ms": 1,
                                      "charged_ms": 0}])"))
                .find("split_checks[].measured_ms is negative"),
            std::string::npos);
}

TEST(CostFile, AnotherMachineIsRefusedNamingWhatDiffers) {
  CostFile costs;
  costs.machine = {"Some Other CPU", "avx2"};
  MachineIdentity here{"This CPU", "avx2 avx512f"};
  std::string message = error_of([&] { check_same_machine(costs, here, "c.json"); });
  EXPECT_NE(message.find("c.json was measured on another machine"), std::string::npos) << message;
  EXPECT_NE(message.find("CPU model: measured on 'Some Other CPU', this machine is 'This CPU'"), std::string::npos);
  EXPECT_NE(message.find("ISA: measured with 'avx2', this machine has 'avx2 avx512f'"), std::string::npos);
  EXPECT_EQ(error_of([&] { check_same_machine(costs, costs.machine, "c.json"); }), "no error");
}

}  // namespace latency_placement_test
}  // namespace switchyard
