// Compiled code against its peers, measured in the same run:
//  - a 10-operator element-wise chain over 16M floats vs one memcpy of the
//    same bytes (aim: within 1.3x);
//  - dense 1024x1024x1024 float32 vs oneDNN's SGEMM on the same problem, the
//    best SGEMM this machine has (aim: at least 70%);
//  - a small CNN and the MLP example end to end, with each device's planned
//    arena against the planner's lower bound (aim: within 1.1x).
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include "backend/build.h"
#include "runtime/artifact.h"
#include "text/parser.h"

namespace switchyard {
namespace {

struct Compiled {
  std::shared_ptr<Artifact> artifact;
  std::vector<NDArray> inputs;
  BuildReport report;
};

NDArray random_array(const std::vector<int64_t>& shape, uint32_t seed) {
  NDArray a(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 0.1f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = dist(rng);
  return a;
}

Compiled compile(const std::string& name, const std::string& text, const std::string& devices) {
  std::string dir = std::filesystem::temp_directory_path() / ("sy_bench_" + name);
  BuildOptions options{.config = CompilationConfig::parse(devices)};
  Compiled c;
  IRModule mod = parse_module(text, name + ".sy");
  c.report = build_artifact(mod, options, dir);
  c.artifact = Artifact::load(dir);
  uint32_t seed = 1;
  for (const ManifestTensor& in : c.artifact->manifest().inputs) c.inputs.push_back(random_array(in.shape, seed++));
  return c;
}

void report_memory(benchmark::State& state, const BuildReport& report) {
  for (const DeviceMemoryReport& m : report.memory) {
    state.counters[m.device + "_arena_bytes"] = double(m.planned_bytes);
    state.counters[m.device + "_lower_bound"] = double(m.lower_bound_bytes);
  }
}

constexpr int64_t kChainElements = 16 * 1024 * 1024;

void BM_ElementwiseChain10(benchmark::State& state) {
  static Compiled c = compile("chain10", R"(
def @main(%x: Tensor[(16777216), float32]) -> Tensor[(16777216), float32] {
  %0 = add(%x, 1f);
  %1 = multiply(%0, 2f);
  %2 = nn.relu(%1);
  %3 = subtract(%2, 0.5f);
  %4 = abs(%3);
  %5 = negative(%4);
  %6 = maximum(%5, -1f);
  %7 = minimum(%6, 3f);
  %8 = multiply(%7, 0.25f);
  add(%8, 0.1f)
})",
                              "cpu:0");
  // Caller-owned output, like the memcpy's destination: only the kernel is timed.
  NDArray out(DType::kFloat32, {kChainElements});
  std::vector<TensorView> in{{c.inputs[0].data(), DType::kFloat32, {kChainElements}}};
  std::vector<MutableTensorView> outs{{out.data(), DType::kFloat32, {kChainElements}}};
  for (auto _ : state) c.artifact->run_buffers(in, outs, {.record_stats = false});
  state.SetBytesProcessed(state.iterations() * kChainElements * 4 * 2);
}

void BM_MemcpySameBytes(benchmark::State& state) {
  NDArray src = random_array({kChainElements}, 1);
  NDArray dst(DType::kFloat32, {kChainElements});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.nbytes());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * kChainElements * 4 * 2);
}

void BM_CompiledDense1024(benchmark::State& state) {
  static Compiled c = compile("dense1024", R"(
def @main(%x: Tensor[(1024, 1024), float32], %w: Tensor[(1024, 1024), float32]) -> Tensor[(1024, 1024), float32] {
  nn.dense(%x, %w)
})",
                              "cpu:0");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_OneDnnSgemm1024(benchmark::State& state) {
  NDArray a = random_array({1024, 1024}, 1), b = random_array({1024, 1024}, 2);
  NDArray out(DType::kFloat32, {1024, 1024});
  for (auto _ : state)
    dnnl_sgemm('N', 'T', 1024, 1024, 1024, 1.0f, a.as<float>(), 1024, b.as<float>(), 1024, 0.0f, out.as<float>(), 1024);
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SmallCnn(benchmark::State& state) {
  static Compiled c = compile("small_cnn", R"(
def @main(%x: Tensor[(1, 3, 64, 64), float32] @cpu:0,
          %w1: Tensor[(16, 3, 3, 3), float32], %b1: Tensor[(1, 16, 1, 1), float32],
          %w2: Tensor[(32, 16, 3, 3), float32], %b2: Tensor[(1, 32, 1, 1), float32],
          %w3: Tensor[(10, 32), float32], %b3: Tensor[(10), float32]) -> Tensor[(1, 10), float32] @cpu:1 {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);
  %4 = nn.conv2d(%3, %w2, padding=[1, 1, 1, 1]);
  %5 = add(%4, %b2);
  %6 = nn.relu(%5);
  %7 = nn.global_avg_pool2d(%6);
  %8 = reshape(%7, newshape=[1, 32]);
  %9 = on_device(%8, device="cpu:1");
  %10 = nn.dense(%9, %w3);
  %11 = add(%10, %b3);
  nn.softmax(%11)
})",
                              "cpu:0,cpu:1");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  report_memory(state, c.report);
}

void BM_MlpExample(benchmark::State& state) {
  static Compiled c = compile("mlp", R"(
def @main(%x: Tensor[(8, 784), float32] @cpu:0,
          %w1: Tensor[(512, 784), float32], %b1: Tensor[(512), float32],
          %w2: Tensor[(256, 512), float32], %b2: Tensor[(256), float32],
          %w3: Tensor[(10, 256), float32], %b3: Tensor[(10), float32]) -> Tensor[(8, 10), float32] @cpu:1 {
  %0 = nn.dense(%x, %w1);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2);
  %4 = add(%3, %b2);
  %5 = nn.relu(%4);
  %6 = on_device(%5, device="cpu:1");
  %7 = nn.dense(%6, %w3);
  %8 = add(%7, %b3);
  nn.softmax(%8)
})",
                              "cpu:0,cpu:1");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  report_memory(state, c.report);
}

BENCHMARK(BM_ElementwiseChain10)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_MemcpySameBytes)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_CompiledDense1024)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_OneDnnSgemm1024)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_SmallCnn)->Unit(benchmark::kMicrosecond)->MinTime(1)->UseRealTime();
BENCHMARK(BM_MlpExample)->Unit(benchmark::kMicrosecond)->MinTime(1)->UseRealTime();

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
