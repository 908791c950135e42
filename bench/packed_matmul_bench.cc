// The runtime's packed matmul against oneDNN's matmul (its GEMM, weights
// given column by column as the compiler asks) on the suite's products with
// constant weights: the encoder's QKV, output, feed-forward products
// (128 rows), the MLP's first layer (1 row) and an LSTM's recurrent step
// (1 or 2 rows by 512 x 2048: 4 MB of weights), bias fused, at 1 and 2
// threads. Counters: GFLOP/s and the largest difference between the two
// outputs relative to the largest output.
//
//   build/bin/packed_matmul_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "primitive_run.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/packed_matmul.h"

namespace switchyard {
namespace {

PrimitiveSpec product(int64_t m, int64_t k, int64_t n, const std::string& algorithm) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.algorithm = algorithm;
  s.src = {{m, k}, {k, 1}};
  s.weights = {{k, n}, {1, k}};  // nn.dense's weights: each output's contiguous
  s.bias = {{1, n}, {n, 1}};
  s.dst = {{m, n}, {n, 1}};
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.any_weights_layout = true;
  return s;
}


void matmul(benchmark::State& state, const std::string& algorithm) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = int(state.range(3));
  std::vector<float> x = random_values(size_t(m * k), 1), w = random_values(size_t(k * n), 2),
                     b = random_values(size_t(n), 3);
  PrimitiveRun run(product(m, k, n, algorithm), threads, x, w, b);
  PrimitiveRun reference(product(m, k, n, ""), 1, x, w, b);
  reference();
  for (auto _ : state) run();
  run();
  double largest = 0, difference = 0;
  for (size_t i = 0; i < run.out.size(); ++i) {
    largest = std::max(largest, double(std::fabs(reference.out[i])));
    difference = std::max(difference, double(std::fabs(run.out[i] - reference.out[i])));
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(m * k * n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rel_diff"] = difference / largest;
}

void SuiteProducts(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (auto [m, k, n] : {std::tuple{128, 256, 768}, {128, 256, 256}, {128, 256, 1024}, {128, 1024, 256},
                           {1, 784, 512}, {1, 512, 512}, {4, 784, 512}, {16, 784, 512}, {32, 784, 512},
                           {1, 2048, 1000}, {1, 512, 2048}, {2, 512, 2048}})
      b->Args({m, k, n, threads});
  b->ArgNames({"m", "k", "n", "threads"})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK_CAPTURE(matmul, onednn, std::string())->Apply(SuiteProducts);
BENCHMARK_CAPTURE(matmul, packed, std::string(kPackedMatmulAlgorithm))->Apply(SuiteProducts);

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
