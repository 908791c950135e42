// Generated element-wise math against the memory bound, measured in the same
// run and on one thread (the memcpy is single-threaded too):
//  - GELU in its erf form, x * 0.5 * (1 + erf(x / sqrt 2)) as ONNX exports
//    it, over 1M floats, vs a memcpy of the same bytes;
//  - softmax over 512 rows of 128 (the encoder's attention shape).
#include <benchmark/benchmark.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include "pipeline/build.h"
#include "runtime/artifact.h"
#include "text/parser.h"

namespace switchyard {
namespace {

constexpr int64_t kElements = 1024 * 1024;

NDArray random_array(const std::vector<int64_t>& shape, uint32_t seed) {
  NDArray a(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 1.5f);  // GELU's inputs: both tails and the middle
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = dist(rng);
  return a;
}

std::shared_ptr<Artifact> compile(const std::string& name, const std::string& text) {
  std::string dir = std::filesystem::temp_directory_path() / ("sy_math_bench_" + name);
  BuildOptions options{.config = CompilationConfig::parse("cpu:0")};
  build_artifact(parse_module(text, name + ".sy"), options, dir);
  return Artifact::load(dir, {.threads = 1});
}

// Runs `artifact` on one input of `shape` into a caller-owned output, so only
// the kernel is timed; bytes count one read and one write, as the memcpy's.
void run_timed(benchmark::State& state, Artifact& artifact, const std::vector<int64_t>& shape) {
  NDArray x = random_array(shape, 1), out(DType::kFloat32, shape);
  std::vector<TensorView> in{{x.data(), DType::kFloat32, shape}};
  std::vector<MutableTensorView> outs{{out.data(), DType::kFloat32, shape}};
  for (auto _ : state) artifact.run_buffers(in, outs, {.record_stats = false});
  state.SetBytesProcessed(state.iterations() * x.numel() * 4 * 2);
}

void BM_GeluErf1M(benchmark::State& state) {
  static std::shared_ptr<Artifact> a = compile("gelu", R"(
def @main(%x: Tensor[(1048576), float32]) -> Tensor[(1048576), float32] {
  %0 = divide(%x, 1.41421354f);
  %1 = erf(%0);
  %2 = add(%1, 1f);
  %3 = multiply(%x, %2);
  multiply(%3, 0.5f)
})");
  run_timed(state, *a, {kElements});
}

void BM_Softmax512x128(benchmark::State& state) {
  static std::shared_ptr<Artifact> a = compile("softmax", R"(
def @main(%x: Tensor[(512, 128), float32]) -> Tensor[(512, 128), float32] {
  nn.softmax(%x)
})");
  run_timed(state, *a, {512, 128});
}

void BM_MemcpySameBytes1M(benchmark::State& state) {
  NDArray src = random_array({kElements}, 1), dst(DType::kFloat32, {kElements});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.nbytes());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4 * 2);
}

}  // namespace

BENCHMARK(BM_GeluErf1M)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Softmax512x128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemcpySameBytes1M)->Unit(benchmark::kMicrosecond);

}  // namespace switchyard

BENCHMARK_MAIN();
