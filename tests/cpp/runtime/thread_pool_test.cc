// Thread pool: every index exactly once, static chunks of at least `grain`,
// on OpenMP's threads, nested and concurrent loops without deadlock, exceptions carried back, a
// capped size.
#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {
namespace thread_pool_test {

int64_t parallel_sum(ThreadPool& pool, int64_t n, int64_t grain) {
  std::atomic<int64_t> sum{0};
  pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    int64_t local = 0;
    for (int64_t i = begin; i < end; ++i) local += i;
    sum += local;
  });
  return sum.load();
}

TEST(ThreadPool, SumsAreCorrectForManyShapes) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  for (int64_t n : {0, 1, 2, 3, 7, 100, 1001, 100000})
    for (int64_t grain : {0, 1, 3, 64, 1000000})
      EXPECT_EQ(parallel_sum(pool, n, grain), n * (n - 1) / 2) << n << " " << grain;
}

TEST(ThreadPool, DefaultSizeIsTheHardwareConcurrency) {
  ThreadPool pool;
  EXPECT_EQ(pool.num_threads(), default_thread_count());
  EXPECT_GE(default_thread_count(), 1);
}

TEST(ThreadPool, ChunksAreContiguousAtLeastGrainAndAtMostFourAThread) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  pool.parallel_for(103, 10, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  ASSERT_EQ(chunks.size(), 10u);  // min(103 / 10, 4 chunks for each of 4 threads)
  int64_t expected_begin = 0;
  for (auto [begin, end] : chunks) {
    EXPECT_EQ(begin, expected_begin);
    EXPECT_GE(end - begin, 10);
    expected_begin = end;
  }
  EXPECT_EQ(expected_begin, 103);

  chunks.clear();
  pool.parallel_for(1000, 1, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  });
  EXPECT_EQ(chunks.size(), 16u);

  chunks.clear();
  pool.parallel_for(19, 10, [&](int64_t begin, int64_t end) { chunks.emplace_back(begin, end); });
  ASSERT_EQ(chunks.size(), 1u);  // fewer than two grains: no split
  EXPECT_EQ(chunks[0], std::make_pair(int64_t(0), int64_t(19)));
}

// A loop runs on its caller and at most the pool's count of threads in all;
// a pool of one runs everything on its caller.
TEST(ThreadPool, LoopsRunOnTheCallerAndAtMostThePoolsCountOfThreads) {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    std::mutex mutex;
    std::set<std::thread::id> ran_on;
    pool.parallel_for(300, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard<std::mutex> lock(mutex);
      ran_on.insert(std::this_thread::get_id());
    });
    EXPECT_LE(ran_on.size(), size_t(threads));
    EXPECT_TRUE(ran_on.count(std::this_thread::get_id())) << threads << " threads";
  }
}

TEST(ThreadPool, NestedLoopsComplete) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.parallel_for(12, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) total += parallel_sum(pool, 1000, 1);
  });
  EXPECT_EQ(total.load(), 12 * (1000 * 999 / 2));
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirOwnResult) {
  ThreadPool pool(2);  // fewer workers than callers: callers must do their own work
  std::vector<std::thread> callers;
  std::vector<int> wrong(8, 0);
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 200; ++round) {
        int64_t n = 500 + c * 37 + round;
        if (parallel_sum(pool, n, 7) != n * (n - 1) / 2) wrong[size_t(c)]++;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(std::accumulate(wrong.begin(), wrong.end(), 0), 0);
}

TEST(ThreadPool, ExceptionsReachTheCallerAfterAllChunks) {
  ThreadPool pool(4);
  std::atomic<int> finished{0};
  EXPECT_THROW(pool.parallel_for(4, 1,
                                 [&](int64_t begin, int64_t) {
                                   if (begin == 2) throw std::runtime_error("chunk failed");
                                   finished++;
                                 }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(parallel_sum(pool, 100, 1), 4950);  // still usable
}

// A corrupt count (a manifest's devices[].threads of 10^6) is refused before
// any thread starts, rather than exhausting the process table.
TEST(ThreadPoolLimitTest, RefusesMoreThanTheCap) {
  try {
    ThreadPool pool(kMaxPoolThreads + 1);
    FAIL() << "started a pool of 1025 threads";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "a thread pool of 1025 threads is refused (at most 1024)");
  }
  EXPECT_LE(default_thread_count(), kMaxPoolThreads);
}

}  // namespace thread_pool_test
}  // namespace switchyard
