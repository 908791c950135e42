// Scaling of device planning and of the whole default pipeline (InferType,
// PlanDevices, ToGraphNormalForm, SimplifyExpr, FoldConstant,
// EliminateCommonSubexpr, DeadCodeElimination, FuseOps) on chains and wide graphs of 10^4 to 10^6
// nodes with random wishes on two devices (so the minimum cut does real work);
// and of the whole build (`switchyard compile`) of let chains: of adds, which
// fuse, and of softmaxes, anchors that do not, so each is a step of the
// entry function.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "op/registry.h"
#include "pipeline/build.h"
#include "pipeline/pass_table.h"
#include "placement/plan_devices.h"
#include "support/let_chain.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace {

const VirtualDevice* device(int i) { return VirtualDevice::for_device(DeviceKind::kCPU, i); }

IRModule chain(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Var x = make_var("x", tensor_type({16}, DType::kFloat32), {.virtual_device = device(0)});
  Expr e = x;
  for (int64_t i = 0; i < n; ++i) {
    e = make_op_call(i % 2 ? "negative" : "exp", {e});
    if (rng() % 1000 == 0) e = make_op_call("on_device", {e}, {{"device", rng() % 2 ? "cpu:1" : "cpu:0"}});
  }
  IRModule mod;
  mod.add("main", make_function({x}, e));
  return infer_type(mod);
}

// Many parameters, each through a short chain, summed pairwise in a tree.
IRModule wide(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Var> params;
  std::vector<Expr> level;
  for (int64_t i = 0; i < n / 3; ++i) {
    const VirtualDevice* vd = rng() % 10 == 0 ? device(int(rng() % 2)) : nullptr;
    Var p = make_var("p" + std::to_string(i), tensor_type({int64_t(1 + rng() % 64)}, DType::kFloat32), {.virtual_device = vd});
    params.push_back(p);
    level.push_back(make_op_call("nn.relu", {make_op_call("exp", {p})}));
  }
  // Shapes differ, so reduce each to a scalar before combining.
  for (Expr& e : level) e = make_op_call("sum", {e});
  while (level.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(make_op_call("add", {level[i], level[i + 1]}));
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  IRModule mod;
  mod.add("main", make_function(params, level[0]));
  return infer_type(mod);
}

using testing::let_chain;

// The time per node of the state's argument, `state.range(0)` nodes.
benchmark::Counter per_node(const benchmark::State& state) {
  return benchmark::Counter(double(state.range(0)),
                            benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Device planning of `mod` over two CPUs.
void plan_devices_of(benchmark::State& state, const IRModule& mod) {
  CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  for (auto _ : state) benchmark::DoNotOptimize(plan_devices(mod, config));
  state.counters["ns_per_node"] = per_node(state);
}

// The default pipeline on `mod` over `devices`.
void run_default_pipeline(benchmark::State& state, const IRModule& mod, const std::string& devices) {
  Pass pipeline = default_pipeline({.config = CompilationConfig::parse(devices)});
  PassContext ctx;
  for (auto _ : state) benchmark::DoNotOptimize(pipeline(mod, ctx));
  state.counters["ns_per_node"] = per_node(state);
}

void BM_PlanChain(benchmark::State& state) { plan_devices_of(state, chain(state.range(0), 7)); }
void BM_PlanWide(benchmark::State& state) { plan_devices_of(state, wide(state.range(0), 7)); }
void BM_DefaultPipelineChain(benchmark::State& state) {
  run_default_pipeline(state, chain(state.range(0), 7), "cpu:0,cpu:1");
}
void BM_DefaultPipelineWide(benchmark::State& state) {
  run_default_pipeline(state, wide(state.range(0), 7), "cpu:0,cpu:1");
}
void BM_DefaultPipelineLetChain(benchmark::State& state) {
  run_default_pipeline(state, parse_module(let_chain(state.range(0), "add"), "lets.sy"), "cpu:0");
}

// The whole build, C++ compiles included: each iteration has a cache of its
// own, so nothing comes from an earlier one. Argument 1: 0 adds, 1 softmaxes.
// The softmaxes are one entry step each, which the entry splits into
// functions of 256 (lower/aot_codegen.cc), so the time grows linearly.
void BM_BuildLetChain(benchmark::State& state) {
  IRModule mod = parse_module(let_chain(state.range(0), state.range(1) ? "nn.softmax" : "add"), "lets.sy");
  std::filesystem::path scratch = std::filesystem::temp_directory_path() / "sy_bench_let_chain";
  BuildReport report;
  for (auto _ : state) {
    std::filesystem::remove_all(scratch);
    BuildOptions options{.config = CompilationConfig::parse("cpu:0"), .cache_dir = (scratch / "cache").string()};
    report = build_artifact(mod, options, (scratch / "artifact").string());
  }
  std::filesystem::remove_all(scratch);
  state.counters["kernel_calls"] = report.kernel_calls;
  for (const BuildStage& stage : report.stages)
    if (stage.name == "passes" || stage.name == "compile") state.counters[stage.name + "_ms"] = stage.milliseconds;
  state.counters["time_per_node"] = per_node(state);
}

BENCHMARK(BM_PlanChain)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_PlanWide)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_DefaultPipelineChain)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_DefaultPipelineWide)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_DefaultPipelineLetChain)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_BuildLetChain)
    ->Args({10000, 0})->Args({20000, 0})->Args({100000, 0})
    ->Args({1000, 1})->Args({5000, 1})->Args({20000, 1})
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();  // most of it is the C++ compiler, another process

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
