// libgomp's waiting threads spin briefly, then block, in a program linked
// with the runtime (the CLI's case and a C API user's): the early
// constructor sets GOMP_SPINCOUNT before libgomp reads it. Issue 39: a
// thread spinning for a core another process held made two-thread runs many
// times slower than one thread. tests/python/test_openmp_wait.py checks a
// process where libgomp was loaded first.
#include "runtime/openmp_wait_policy.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "runtime/openmp_wait/early_short_spin.h"
#include "runtime/thread_pool.h"

namespace switchyard {
namespace openmp_wait_test {

double process_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

TEST(OpenMpWait, LibgompReadsTheShortSpinBeforeAnythingRuns) {
  if (openmp_wait() == OpenMpWait::kUserSetting)
    GTEST_SKIP() << "OMP_WAIT_POLICY or GOMP_SPINCOUNT is set in this test's environment: the user's setting stays";
  EXPECT_EQ(openmp_wait(), OpenMpWait::kShortSpin);
  // What libgomp itself took (looked up: this program does not link it).
  auto display_env = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_display_env"));
  ASSERT_NE(display_env, nullptr);
  ::testing::internal::CaptureStderr();
  display_env(1);
  std::string shown = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(shown.find("GOMP_SPINCOUNT = '" SY_OPENMP_SHORT_SPIN "'"), std::string::npos) << shown;
}

// The pool's threads, done with a loop, sleep instead of spinning through
// the caller's pause (libgomp's default spin is milliseconds of CPU a
// wait). CPU time, not latency: an idle process uses next to none.
TEST(OpenMpWait, ThePoolsThreadsUseNoCpuWhileTheCallerSleeps) {
  if (openmp_wait() == OpenMpWait::kUserSetting)
    GTEST_SKIP() << "OMP_WAIT_POLICY or GOMP_SPINCOUNT is set in this test's environment: the user's setting stays";
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  double idle_cpu_ms = 0;
  for (int i = 0; i < 10; ++i) {
    pool.parallel_for(1 << 16, 1024, [&](int64_t begin, int64_t end) { sum += end - begin; });
    double before = process_cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    idle_cpu_ms += process_cpu_ms() - before;
  }
  EXPECT_EQ(sum.load(), 10 << 16);
  EXPECT_LT(idle_cpu_ms, 15.0) << "threads spun while the caller slept";
}

}  // namespace openmp_wait_test
}  // namespace switchyard
