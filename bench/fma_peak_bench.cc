// The machine's single-precision FMA peak on one core: the yardstick every
// GFLOP/s figure of the project is stated against, measured in the same run
// because machines of this project differ (AVX2 or AVX-512, clock speeds).
//   build/bin/fma_peak_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

// Independent accumulator chains hide the FMA latency (4-5 cycles) behind
// the two FMA pipes; 12 chains is enough on every x86 core in use here.
constexpr int kChains = 12;

template <typename Vector>
__attribute__((always_inline)) inline void fma_loop(int64_t iterations, Vector* acc, Vector a, Vector b) {
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
}

template <typename Vector>
double sum_lanes(const Vector* acc, int lanes) {
  double s = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < lanes; ++l) s += acc[c][l];
  return s;
}

using Float8 = float __attribute__((vector_size(32)));
using Float16 = float __attribute__((vector_size(64)));

// Each chain starts from its own value: chains that start equal are one
// chain to GCC, which then ran a single FMA per iteration, latency-bound,
// while the count said twelve (the figure was 1.5x the real peak).
template <typename Vector>
void distinct_starts(Vector* acc, int lanes) {
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < lanes; ++l) acc[c][l] = 1e-3f * float(c * lanes + l + 1);
}

__attribute__((target("avx2,fma"), noinline)) double run_avx2(int64_t iterations) {
  Float8 acc[kChains];
  distinct_starts(acc, 8);
  Float8 a = {}, b = {};
  for (int l = 0; l < 8; ++l) a[l] = 0.999999f, b[l] = 1e-7f;
  fma_loop(iterations, acc, a, b);
  return sum_lanes(acc, 8);
}

__attribute__((target("avx512f"), noinline)) double run_avx512(int64_t iterations) {
  Float16 acc[kChains];
  distinct_starts(acc, 16);
  Float16 a = {}, b = {};
  for (int l = 0; l < 16; ++l) a[l] = 0.999999f, b[l] = 1e-7f;
  fma_loop(iterations, acc, a, b);
  return sum_lanes(acc, 16);
}

void fma_peak(benchmark::State& state, bool avx512) {
  if (avx512 ? !__builtin_cpu_supports("avx512f") : !__builtin_cpu_supports("fma")) {
    state.SkipWithError(avx512 ? "this CPU has no AVX-512" : "this CPU has no FMA");
    return;
  }
  const int64_t kIterations = 1 << 22;
  const int lanes = avx512 ? 16 : 8;
  for (auto _ : state) {
    int64_t iterations = kIterations;
    benchmark::DoNotOptimize(iterations);  // opaque, so each call really runs
    benchmark::DoNotOptimize(avx512 ? run_avx512(iterations) : run_avx2(iterations));
  }
  double flops = double(kIterations) * kChains * lanes * 2 * double(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(fma_peak, avx2_fma, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fma_peak, avx512, true)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
