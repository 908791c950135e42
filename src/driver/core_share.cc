// The core-share probe of `switchyard profile` (see core_share.h).
#include "driver/core_share.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>

#include "runtime/device_queues.h"

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

// Twelve independent chains keep both FMA pipes of a core busy (their
// latency is 4-5 cycles), so a second thread on the same core finds none
// free and each gets about half.
constexpr int kChains = 12;
constexpr int kIterationsPerRound = 1 << 12;

using Float8 = float __attribute__((vector_size(32)));
using Float16 = float __attribute__((vector_size(64)));

template <typename Vector>
__attribute__((always_inline)) inline uint64_t rounds_until(Clock::time_point end, float* sink) {
  Vector acc[kChains];
  Vector scale, shift;
  constexpr int lanes = int(sizeof(Vector) / sizeof(float));
  for (int l = 0; l < lanes; ++l) {
    scale[l] = 0.999999f;
    shift[l] = 1e-7f;
    // Distinct starts: equal chains would be folded into one.
    for (int c = 0; c < kChains; ++c) acc[c][l] = 1e-3f * float(c * lanes + l + 1);
  }
  uint64_t rounds = 0;
  while (Clock::now() < end) {
    for (int i = 0; i < kIterationsPerRound; ++i)
      for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * scale + shift;
    ++rounds;
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c) total += acc[c][0];
  *sink = total;
  return rounds;
}

__attribute__((target("avx512f"), noinline)) uint64_t rounds_avx512(Clock::time_point end, float* sink) {
  return rounds_until<Float16>(end, sink);
}
__attribute__((target("avx2,fma"), noinline)) uint64_t rounds_avx2(Clock::time_point end, float* sink) {
  return rounds_until<Float8>(end, sink);
}
__attribute__((noinline)) uint64_t rounds_plain(Clock::time_point end, float* sink) {
  return rounds_until<Float8>(end, sink);
}

// Rounds per second on the calling thread for `window`.
double arithmetic_rate(std::chrono::milliseconds window) {
  static const auto rounds = __builtin_cpu_supports("avx512f") ? rounds_avx512
                             : __builtin_cpu_supports("fma")   ? rounds_avx2
                                                               : rounds_plain;
  float sink = 0;
  const Clock::time_point start = Clock::now();
  const uint64_t done = rounds(start + window, &sink);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // The sink keeps the loop; a NaN never comes from these finite chains.
  return sink != sink ? 0 : double(done) / std::max(seconds, 1e-9);
}

// Each core's rate with the given cores computing at once, one thread each.
std::vector<double> rates_at_once(const std::vector<int>& cores, std::chrono::milliseconds window) {
  std::vector<double> rates(cores.size(), 0);
  std::vector<std::exception_ptr> errors(cores.size());
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cores.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        pin_calling_thread({cores[i]});
      } catch (...) {
        errors[i] = std::current_exception();
      }
      // Every thread starts its window once all are pinned, the failed ones too (they then leave).
      ready.fetch_add(1);
      while (ready.load() < cores.size()) std::this_thread::yield();
      if (!errors[i]) rates[i] = arithmetic_rate(window);
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return rates;
}

}  // namespace

double CoreShare::least() const {
  double least = 1;
  for (size_t i = 0; i < cores.size() && cores.size() > 1; ++i)
    least = std::min(least, alone[i] > 0 ? together[i] / alone[i] : 0.0);
  return least;
}

double CoreShare::slowest_alone() const {
  if (alone.empty()) return 1;
  const auto [slowest, fastest] = std::minmax_element(alone.begin(), alone.end());
  return *fastest > 0 ? *slowest / *fastest : 1;
}

std::string CoreShare::alone_text() const {
  if (alone.empty()) return "";
  const auto [slowest, fastest] = std::minmax_element(alone.begin(), alone.end());
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", slowest_alone());
  return "core " + std::to_string(cores[size_t(slowest - alone.begin())]) + " alone ran at " + ratio + " of core " +
         std::to_string(cores[size_t(fastest - alone.begin())]) + "'s speed";
}

std::string CoreShare::text() const {
  std::string names, shares;
  for (size_t i = 0; i < cores.size(); ++i) {
    const char* separator = i == 0 ? "" : i + 1 == cores.size() ? " and " : ", ";
    char share[32];
    std::snprintf(share, sizeof share, "%.2f", alone[i] > 0 ? together[i] / alone[i] : 0.0);
    names += separator + std::to_string(cores[i]);
    shares += separator + std::string(share);
  }
  return "cores " + names + " at once keep " + shares + " of their speed alone";
}

CoreShare measure_core_share(const std::vector<int>& cores, std::chrono::milliseconds window) {
  CoreShare share;
  share.cores = cores;
  for (int core : cores) share.alone.push_back(rates_at_once({core}, window).front());
  share.together = rates_at_once(cores, window);
  return share;
}

}  // namespace switchyard
