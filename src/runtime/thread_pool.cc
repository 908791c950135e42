// Thread pool: one OpenMP parallel region a loop; its threads claim chunks
// through an atomic counter, so a thread the machine holds back takes fewer.
#include "runtime/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/openmp_wait_policy.h"
#include "runtime/runtime_error.h"

namespace switchyard {

namespace {
constexpr int64_t kChunksPerThread = 4;  // thread_pool.h says why

// Released by a loop's caller before its region and by each of its threads
// after their share, acquired at the other ends (both kinds of loop below): the order OpenMP's fork and
// join give, spelled out for ThreadSanitizer, which cannot see inside
// libgomp. Static, so that no thread's first access to it can come before an
// order (ThreadSanitizer checks an atomic's own access before its acquire).
std::atomic<uint64_t> region_order{0};
}  // namespace

int default_thread_count() {
  unsigned count = std::thread::hardware_concurrency();
  return count == 0 ? 1 : int(std::min<unsigned>(count, kMaxPoolThreads));
}

void openmp_parallel_for(int threads, int64_t n, const std::function<void(int64_t)>& body) {
  region_order.fetch_add(1, std::memory_order_release);
#pragma omp parallel num_threads(threads)
  {
    region_order.fetch_add(1, std::memory_order_acquire);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) body(i);
    region_order.fetch_add(1, std::memory_order_release);
  }
  region_order.load(std::memory_order_acquire);
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads <= 0 ? default_thread_count() : num_threads) {
  if (num_threads_ > kMaxPoolThreads)
    throw RuntimeError("a thread pool of " + std::to_string(num_threads_) + " threads is refused (at most " +
                       std::to_string(kMaxPoolThreads) + ")");
  if (num_threads_ > 1) bound_openmp_spinning();
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const ParallelBody& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t num_chunks = std::min<int64_t>(n / grain, kChunksPerThread * num_threads_);
  if (num_chunks <= 1 || num_threads_ == 1 || omp_in_parallel()) {
    body(0, n);
    return;
  }
  const int64_t base = n / num_chunks;
  const int64_t remainder = n % num_chunks;  // the first `remainder` chunks take one element more
  std::atomic<int64_t> next_chunk{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  const int team = int(std::min<int64_t>(num_chunks, num_threads_));
  region_order.fetch_add(1, std::memory_order_release);
#pragma omp parallel num_threads(team)
  {
    region_order.fetch_add(1, std::memory_order_acquire);
    for (;;) {
      const int64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= num_chunks) break;
      const int64_t begin = chunk * base + std::min(chunk, remainder);
      const int64_t end = begin + base + (chunk < remainder ? 1 : 0);
      try {
        body(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    region_order.fetch_add(1, std::memory_order_release);
  }
  region_order.load(std::memory_order_acquire);
  if (error) std::rethrow_exception(error);
}

}  // namespace switchyard
