// Events and workers of runs whose device queues run at once (see device_queues.h).
#include "runtime/device_queues.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <string>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {
// Rounds a waiter checks its event before it sleeps: a step on the other
// queue often ends soon, and a sleep and wake cost a system call each.
constexpr int kSpinRounds = 2000;
}  // namespace

RunEvents::RunEvents(int count) : count_(count), done_(new std::atomic<uint32_t>[size_t(count > 0 ? count : 1)]) {
  for (int e = 0; e < count_; ++e) done_[size_t(e)].store(0, std::memory_order_relaxed);
}

void RunEvents::signal(int event) {
  done_[size_t(event)].store(1, std::memory_order_release);
  progress_.fetch_add(1, std::memory_order_release);
  progress_.notify_all();
}

void RunEvents::stop() {
  stopped_.store(true, std::memory_order_release);
  progress_.fetch_add(1, std::memory_order_release);
  progress_.notify_all();
}

bool RunEvents::wait(int event) {
  std::atomic<uint32_t>& done = done_[size_t(event)];
  for (int round = 0; round < kSpinRounds; ++round) {
    if (done.load(std::memory_order_acquire)) return true;
    if (stopped_.load(std::memory_order_acquire)) return false;
  }
  for (;;) {
    // Read the counter first: a signal after this read changes it, so the sleep below returns.
    uint32_t seen = progress_.load(std::memory_order_acquire);
    if (done.load(std::memory_order_acquire)) return true;
    if (stopped_.load(std::memory_order_acquire)) return false;
    progress_.wait(seen, std::memory_order_acquire);
  }
}

void pin_calling_thread(const std::vector<int>& cores) {
  if (cores.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : cores) {
    if (core < 0 || core >= CPU_SETSIZE)
      throw RuntimeError("core " + std::to_string(core) + " is outside [0, " + std::to_string(CPU_SETSIZE) + ")");
    CPU_SET(core, &set);
  }
  if (int error = pthread_setaffinity_np(pthread_self(), sizeof set, &set); error != 0)
    throw RuntimeError("cannot run a thread on cores " + std::to_string(cores.front()) + "..." +
                       std::to_string(cores.back()) + ": " + std::strerror(error));
}

QueueWorker::QueueWorker(std::vector<int> cores) {
  // Pinned from the start, so every OpenMP thread it creates inherits the cores.
  std::mutex started_mutex;
  std::condition_variable started;
  bool ready = false;
  std::string error;
  // The thread touches the constructor's locals only under the lock, before
  // `ready`: the constructor may return as soon as it sees `ready`.
  thread_ = std::thread([&, cores = std::move(cores)] {
    std::string failure;
    try {
      pin_calling_thread(cores);
    } catch (const RuntimeError& e) {
      failure = e.what();
    }
    const bool pinned = failure.empty();
    {
      std::lock_guard<std::mutex> lock(started_mutex);
      error = failure;
      ready = true;
      started.notify_one();
    }
    if (pinned) loop();
  });
  std::unique_lock<std::mutex> lock(started_mutex);
  started.wait(lock, [&] { return ready; });
  lock.unlock();
  if (!error.empty()) {
    thread_.join();
    throw RuntimeError(error);
  }
}

QueueWorker::~QueueWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void QueueWorker::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void QueueWorker::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

QueueWorkers::QueueWorkers(const std::vector<std::vector<int>>& cores_of_queue) {
  for (const std::vector<int>& cores : cores_of_queue) workers_.push_back(std::make_unique<QueueWorker>(cores));
}

void QueueWorkers::submit(const std::function<void(int queue)>& task) {
  std::lock_guard<std::mutex> lock(submit_mutex_);
  for (size_t q = 0; q < workers_.size(); ++q) workers_[q]->submit([task, q] { task(int(q)); });
}

void QueueWorkers::run(const std::function<void(int queue)>& task) {
  std::mutex finished_mutex;
  std::condition_variable finished;
  size_t remaining = workers_.size();
  submit([&](int q) {
    task(q);
    std::lock_guard<std::mutex> done(finished_mutex);
    if (--remaining == 0) finished.notify_one();
  });
  std::unique_lock<std::mutex> lock(finished_mutex);
  finished.wait(lock, [&] { return remaining == 0; });
}

}  // namespace switchyard
