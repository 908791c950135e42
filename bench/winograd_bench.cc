// The runtime's Winograd convolution against oneDNN's direct convolution on
// the ResNets' 3x3 stride-1 layers, both reading and writing the blocked
// layout the artifact keeps between layers, on one thread, with bias and
// ReLU fused, batch 1. Counters: GFLOP/s counted as the direct form's
// multiply-adds (so the two are comparable), and the largest difference
// between the two outputs relative to the largest output.
//
// winograd_split: the two ways of sharing one call among threads
// (WinogradSplit), each shape on 1 and 2 threads.
//
//   build/bin/winograd_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <omp.h>

#include <cmath>
#include <utility>
#include <string>
#include <vector>

#include "primitive_run.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard {
namespace {

PrimitiveSpec layer(int64_t channels, int64_t size, const std::string& algorithm) {
  const std::string format = "nChw" + std::to_string(dnnl_channel_block()) + "c";
  PrimitiveSpec s = same_size_3x3_convolution(algorithm, {{1, channels, size, size}, {}, format});
  s.any_weights_layout = true;
  PrimitivePostOp relu;
  relu.algorithm = "eltwise_relu";
  s.post_ops = {relu};
  return s;
}


void convolution(benchmark::State& state, const std::string& algorithm) {
  const int64_t channels = state.range(0), size = state.range(1);
  PrimitiveSpec spec = layer(channels, size, algorithm);
  // The channels are multiples of 16, so the blocked layouts pad nothing
  // and plain random values fill them.
  std::vector<float> x = random_values(size_t(channels * size * size), 1);
  std::vector<float> w = random_values(size_t(channels * channels * 9), 2), b = random_values(size_t(channels), 3);
  for (float& v : w) v *= 0.1f;
  PrimitiveRun run(spec, 1, x, w, b);
  PrimitiveRun direct(layer(channels, size, "convolution_direct"), 1, x, w, b);
  direct();
  for (auto _ : state) run();
  run();
  double largest = 0, difference = 0;
  for (size_t i = 0; i < run.out.size(); ++i) {
    largest = std::max(largest, double(std::fabs(direct.out[i])));
    difference = std::max(difference, double(std::fabs(run.out[i] - direct.out[i])));
  }
  const double flops = 2.0 * double(channels * channels * 9 * size * size);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rel_diff"] = difference / largest;
}

// The Winograd convolution alone on `threads` threads, split in bands or
// phase by phase (range 3: 1 for bands): ResNet-18's and SqueezeNet's
// layers. The choice of WinogradSplit::kChosen is the rule to check here.
void winograd_split(benchmark::State& state) {
  const int64_t channels = state.range(0), size = state.range(1);
  const int threads = int(state.range(2));
  const WinogradSplit split = state.range(3) ? WinogradSplit::kBands : WinogradSplit::kPhases;
  PrimitiveSpec spec = layer(channels, size, kWinogradAlgorithm);
  omp_set_num_threads(threads);
  WinogradConvolution winograd(spec, threads, split);
  std::vector<float> x = random_values(size_t(channels * size * size), 1);
  std::vector<float> w = random_values(size_t(channels * channels * 9), 2), b = random_values(size_t(channels), 3);
  std::vector<float> transformed(winograd.transformed_weights_size()), out(x.size());
  winograd.transform_weights(w.data(), transformed.data());
  testing::Workspace workspace(winograd.workspace_bytes());
  const void* inputs[] = {x.data(), w.data(), b.data()};
  void* outputs[] = {out.data()};
  for (auto _ : state) winograd.execute(inputs, outputs, transformed.data(), workspace.get());
  const double flops = 2.0 * double(channels * channels * 9 * size * size);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bands"] = winograd.split() == WinogradSplit::kBands;
  const int64_t tiles = ((size + 3) / 4) * ((size + 3) / 4);
  state.counters["chosen_bands"] = chosen_winograd_split(tiles, channels, channels, threads) == WinogradSplit::kBands;
}

void SplitShapes(benchmark::internal::Benchmark* b) {
  for (auto [channels, size] : {std::pair{64, 56}, {128, 28}, {256, 14}, {16, 56}, {32, 28}})
    for (int threads : {1, 2})
      for (int bands : {0, 1}) b->Args({channels, size, threads, bands});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

void ResNetLayers(benchmark::internal::Benchmark* b) {
  b->Args({64, 56})->Args({128, 28})->Args({256, 14})->Args({512, 7})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(convolution, direct, std::string("convolution_direct"))->Apply(ResNetLayers);
BENCHMARK_CAPTURE(convolution, winograd, std::string(kWinogradAlgorithm))->Apply(ResNetLayers);
BENCHMARK(winograd_split)->Apply(SplitShapes);

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
