// A fixed pool of worker threads running statically chunked parallel loops.
//
// Several runs may call parallel_for on one pool at once, and a loop body may
// itself call parallel_for: the calling thread always works through its own
// loop's chunks and waits only for chunks other threads are already running,
// so no caller can wait on work that nobody is doing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard {

// Runs over [begin, end).
using ParallelBody = std::function<void(int64_t begin, int64_t end)>;

// The most threads one pool may have: a corrupt count (a manifest's
// devices[].threads of 10^6) is refused instead of exhausting the process
// table. Twice the hardware threads of today's largest two-socket servers,
// and fixed, so an artifact valid on one machine is valid on another.
constexpr int kMaxPoolThreads = 1024;

// The hardware concurrency, at least 1 and at most kMaxPoolThreads.
int default_thread_count();

class ThreadPool {
 public:
  // `num_threads` counts the calling thread, which works too: a pool of N
  // starts N-1 workers. 0 (or less) means default_thread_count(). Throws
  // RuntimeError above kMaxPoolThreads, or when the system cannot start a
  // worker (after stopping those already started).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return int(workers_.size()) + 1; }

  // Splits [0, n) into at most four contiguous chunks per thread, of at
  // least `grain` elements each (one chunk when n < 2 * grain), and runs
  // `body` on each, whichever thread is free taking the next; returns when
  // all are done. Four, not one: a thread the machine holds back (a shared
  // VM's other core) then delays the loop by a quarter of its share. The first exception a chunk throws is
  // rethrown here after every chunk has finished.
  void parallel_for(int64_t n, int64_t grain, const ParallelBody& body);

 private:
  struct Job;
  void worker_loop();
  void stop_workers();  // wakes, joins and forgets every worker
  static void run_chunks(Job& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  // One entry per worker invited to help with a job; a worker that finds the
  // job's chunks all claimed simply moves on.
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::atomic<bool> has_work_{false};  // the queue holds an invitation (read without the lock)
  std::vector<std::thread> workers_;
};

}  // namespace switchyard
