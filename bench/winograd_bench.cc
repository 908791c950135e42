// The runtime's Winograd convolution against oneDNN's direct convolution on
// the ResNets' 3x3 stride-1 layers, both reading and writing the blocked
// layout the artifact keeps between layers, on one thread, with bias and
// ReLU fused, batch 1. Counters: GFLOP/s counted as the direct form's
// multiply-adds (so the two are comparable), and the largest difference
// between the two outputs relative to the largest output.
//
//   build/bin/winograd_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
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

void ResNetLayers(benchmark::internal::Benchmark* b) {
  b->Args({64, 56})->Args({128, 28})->Args({256, 14})->Args({512, 7})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(convolution, direct, std::string("convolution_direct"))->Apply(ResNetLayers);
BENCHMARK_CAPTURE(convolution, winograd, std::string(kWinogradAlgorithm))->Apply(ResNetLayers);

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
