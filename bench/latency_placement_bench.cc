// Device planning under --objective latency on a random DAG of 10^2 to 10^4
// element-wise calls in 16 lanes that read across now and then, on
// 2 and 4 CPU devices: the time of solve_placement (the bytes optimum, the
// candidates, the local search and branch and bound) and of the whole
// plan_devices. Prints the predicted makespan against one device's, and
// whether the placement was proven optimal.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "placement/plan_devices.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace {

// 16 lanes: call i reads call i - 16 (its lane), and a third of the calls
// also a random one of the 64 before it; the result adds the lanes' ends,
// so every call is live.
std::string random_dag_text(int n, uint32_t seed) {
  constexpr int kLanes = 16;
  std::mt19937 rng(seed);
  const char* unary[] = {"exp", "nn.relu", "tanh"};
  const char* binary[] = {"add", "multiply"};
  std::string text = "def @main(%x: Tensor[(16, 64), float32]) -> Tensor[(16, 64), float32] {\n";
  auto name = [](int i) { return "%" + std::to_string(i); };
  for (int i = 0; i < n; ++i) {
    std::string lane = i < kLanes ? "%x" : name(i - kLanes);
    std::string call = i < kLanes || rng() % 3 ? std::string(unary[rng() % 3]) + "(" + lane + ")"
                                               : std::string(binary[rng() % 2]) + "(" + lane + ", " +
                                                     name(i - 1 - int(rng() % unsigned(std::min(i, 64)))) + ")";
    text += "  " + name(i) + " = " + call + ";\n";
  }
  int last = n;
  text += "  " + name(last) + " = add(" + name(n - 1) + ", " + name(n - 2) + ");\n";
  for (int lane = 3; lane <= kLanes; ++lane, ++last)
    text += "  " + name(last + 1) + " = add(" + name(last) + ", " + name(n - lane) + ");\n";
  return text + "  " + name(last) + "\n}\n";
}

CostFile synthetic_costs(const IRModule& typed, const CompilationConfig& config) {
  CostFile costs;
  costs.machine = MachineIdentity::this_machine();
  std::mt19937 rng(3);
  for (const VirtualDevice* d : config.devices) costs.devices.push_back({d->device_name(), "cpu", 1});
  post_order_visit(typed.lookup("main"), [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    if (!call || !as<OpNode>(call->op)) return;
    for (const VirtualDevice* d : config.devices)
      costs.operator_ms[{operator_cost_key(*call), d->device_name()}] = 0.01 + 0.01 * double(rng() % 5);
  });
  for (const VirtualDevice* a : config.devices)
    for (const VirtualDevice* b : config.devices)
      if (a != b) costs.copies[{a->device_name(), b->device_name()}] = CopyCost{0.005, 1e-7};
  return costs;
}

void BM_SolveLatency(benchmark::State& state) {
  const int devices = int(state.range(1));
  std::string list = "cpu:0";
  for (int d = 1; d < devices; ++d) list += ",cpu:" + std::to_string(d);
  CompilationConfig config = CompilationConfig::parse(list);
  IRModule typed = infer_type(parse_module(random_dag_text(int(state.range(0)), 1), "dag.sy"));
  CostFile file = synthetic_costs(typed, config);
  PlacementGraph graph = build_placement_graph(typed, config);
  LatencyCosts costs = latency_costs(graph, config, file, "synthetic");
  PlacementSolution solution;
  for (auto _ : state) solution = solve_placement(graph, config, &costs);
  std::vector<const VirtualDevice*> one(graph.nodes.size(), config.default_device);
  state.counters["places"] = double(graph.nodes.size());
  state.counters["predicted_ms"] = solution.predicted_ms;
  state.counters["proven_optimal"] = solution.search.starts_with("optimal");
  state.counters["one_device_ms"] = predict_times(graph, config, costs, one).makespan_ms;
}

void BM_PlanDevicesLatency(benchmark::State& state) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  IRModule typed = infer_type(parse_module(random_dag_text(int(state.range(0)), 1), "dag.sy"));
  LatencyObjective objective{std::make_shared<CostFile>(synthetic_costs(typed, config)), "synthetic"};
  for (auto _ : state) benchmark::DoNotOptimize(plan_devices(typed, config, objective));
}

BENCHMARK(BM_SolveLatency)
    ->Args({100, 2})
    ->Args({300, 2})
    ->Args({1000, 2})
    ->Args({10000, 2})
    ->Args({10000, 4})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanDevicesLatency)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
