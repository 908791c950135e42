// Thread pool: a shared queue of loop invitations; chunks are claimed through
// an atomic counter, so the caller and any free worker share one loop.
#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <system_error>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {
constexpr int64_t kChunksPerThread = 4;  // thread_pool.h says why
// A worker polls this many rounds (~50 us) for the next loop before it
// sleeps: a run's loops come microseconds apart, and waking a sleeping
// thread costs more (much more on a shared VM).
constexpr int kSpinRounds = 4000;
inline void pause() { __builtin_ia32_pause(); }
}  // namespace

struct ThreadPool::Job {
  const ParallelBody* body = nullptr;
  int64_t n = 0;
  int64_t num_chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> chunks_done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::exception_ptr error;  // the first chunk failure, under `mutex`
};

int default_thread_count() {
  unsigned count = std::thread::hardware_concurrency();
  return count == 0 ? 1 : int(std::min<unsigned>(count, kMaxPoolThreads));
}

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = default_thread_count();
  if (num_threads > kMaxPoolThreads)
    throw RuntimeError("a thread pool of " + std::to_string(num_threads) + " threads is refused (at most " +
                       std::to_string(kMaxPoolThreads) + ")");
  workers_.reserve(size_t(num_threads - 1));
  try {
    for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    // Joinable threads must not be destroyed: stop the ones that started.
    std::string started = std::to_string(workers_.size() + 1);
    stop_workers();
    throw RuntimeError("cannot start a thread pool of " + std::to_string(num_threads) + " threads (" + started +
                       " started): " + e.what());
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    for (int spin = 0; spin < kSpinRounds && !has_work_.load(std::memory_order_acquire); ++spin) pause();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left to help with
      job = std::move(queue_.front());
      queue_.pop_front();
      has_work_.store(!queue_.empty(), std::memory_order_release);
    }
    run_chunks(*job);
  }
}

void ThreadPool::run_chunks(Job& job) {
  const int64_t base = job.n / job.num_chunks;
  const int64_t remainder = job.n % job.num_chunks;
  for (;;) {
    int64_t chunk = job.next_chunk.fetch_add(1);
    if (chunk >= job.num_chunks) return;
    // The first `remainder` chunks take one extra element.
    int64_t begin = chunk * base + std::min(chunk, remainder);
    int64_t end = begin + base + (chunk < remainder ? 1 : 0);
    try {
      (*job.body)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.mutex);
      if (!job.error) job.error = std::current_exception();
    }
    if (job.chunks_done.fetch_add(1) + 1 == job.num_chunks) {
      std::lock_guard<std::mutex> lock(job.mutex);
      job.finished.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const ParallelBody& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t num_chunks = std::min<int64_t>(n / grain, kChunksPerThread * num_threads());
  if (num_chunks <= 1) {
    body(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->n = n;
  job->num_chunks = num_chunks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t i = 1; i < std::min<int64_t>(num_chunks, num_threads()); ++i) queue_.push_back(job);
    has_work_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(*job);
  std::unique_lock<std::mutex> lock(job->mutex);
  job->finished.wait(lock, [&] { return job->chunks_done.load() == job->num_chunks; });
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace switchyard
