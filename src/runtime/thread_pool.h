// A device's thread count, and the statically chunked parallel loops its
// kernels run on that many threads.
//
// The loops run on OpenMP's threads, the ones oneDNN's primitives run on:
// with a pool of its own beside them, two sets of spinning workers took
// turns on the same cores (a two-thread MLP run took 0.023 ms or 0.06 ms
// from one run to the next, the encoder 3 ms or 4.2 ms).
//
// Several runs may call parallel_for on one pool at once (each calling
// thread leads its own OpenMP team), and a loop body may itself call
// parallel_for: inside a parallel region the inner loop runs on the thread
// that calls it, whose team-mates already hold the other chunks.
#pragma once

#include <cstdint>
#include <functional>

namespace switchyard {

// Runs over [begin, end).
using ParallelBody = std::function<void(int64_t begin, int64_t end)>;

// How a caller runs [0, n) in chunks of at least `grain` on its threads
// (Device::parallel_for, ThreadPool::parallel_for).
using ParallelFor = std::function<void(int64_t n, int64_t grain, const ParallelBody& body)>;

// The most threads one pool may have: a corrupt count (a manifest's
// devices[].threads of 10^6) is refused instead of exhausting the process
// table. Twice the hardware threads of today's largest two-socket servers,
// and fixed, so an artifact valid on one machine is valid on another.
constexpr int kMaxPoolThreads = 1024;

// The hardware concurrency, at least 1 and at most kMaxPoolThreads.
int default_thread_count();

// Runs body(i) for each i in [0, n) on a team of `threads` OpenMP threads
// led by the caller, split statically (the Winograd convolution's
// transforms, whose items are even); inside a parallel region, on the
// calling thread alone. Ordered for ThreadSanitizer as parallel_for is.
void openmp_parallel_for(int threads, int64_t n, const std::function<void(int64_t i)>& body);

class ThreadPool {
 public:
  // `num_threads` counts the calling thread, which works too. 0 (or less)
  // means default_thread_count(). Throws RuntimeError above kMaxPoolThreads.
  explicit ThreadPool(int num_threads = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Splits [0, n) into at most four contiguous chunks per thread, of at
  // least `grain` elements each (one chunk when n < 2 * grain), and runs
  // `body` on each, whichever thread is free taking the next; returns when
  // all are done. Four, not one: a thread the machine holds back (a shared
  // VM's other core) then delays the loop by a quarter of its share. The
  // first exception a chunk throws is rethrown here after every chunk has
  // finished.
  void parallel_for(int64_t n, int64_t grain, const ParallelBody& body);

 private:
  int num_threads_;
};

}  // namespace switchyard
