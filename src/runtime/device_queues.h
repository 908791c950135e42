// What runs a model's device queues at once (model_abi.h, SyModelSchedule):
// the events one run's queues order their steps with, and a persistent
// worker thread per queue, pinned to its device's cores when it has some.
//
// A run hands one task to every worker at once, under one lock, and each
// worker takes its tasks in the order they came: so the runs of several
// callers reach every worker in the same order, the earliest unfinished run
// is at the front of every worker, and no run waits for a later one (no
// deadlock between concurrent runs).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard {

// One run's events: each done at most once, waited for by other queues.
// Release on signal, acquire on wait, so a queue that waited sees every
// write of the step it waited for (and ThreadSanitizer sees the order).
class RunEvents {
 public:
  explicit RunEvents(int count);
  int count() const { return count_; }
  void signal(int event);
  // True once `event` is done; false as soon as the run stopped.
  bool wait(int event);
  // The run failed: every wait returns false from now on.
  void stop();

 private:
  int count_;
  std::unique_ptr<std::atomic<uint32_t>[]> done_;
  std::atomic<uint32_t> progress_{0};  // bumped at each signal and stop; waiters sleep on it
  std::atomic<bool> stopped_{false};
};

// A thread that runs the tasks it is given in order.
class QueueWorker {
 public:
  // `cores`: the CPUs it (and the OpenMP team it leads) may run on; empty:
  // wherever the process may. Throws RuntimeError when they cannot be set.
  explicit QueueWorker(std::vector<int> cores);
  ~QueueWorker();
  QueueWorker(const QueueWorker&) = delete;
  QueueWorker& operator=(const QueueWorker&) = delete;

  void submit(std::function<void()> task);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool closing_ = false;
  std::thread thread_;
};

class QueueWorkers {
 public:
  // One worker per entry of `cores_of_queue`, pinned to those cores.
  explicit QueueWorkers(const std::vector<std::vector<int>>& cores_of_queue);
  size_t size() const { return workers_.size(); }
  // Runs task(q) on worker q for every queue at once; returns when all have
  // returned. The tasks must not throw.
  void run(const std::function<void(int queue)>& task);
  // Hands task(q) to worker q for every queue at once and returns: the
  // workers run it after every task handed to them before (run_async's
  // requests, one after another on each queue). The tasks must not throw.
  void submit(const std::function<void(int queue)>& task);

 private:
  std::mutex submit_mutex_;
  std::vector<std::unique_ptr<QueueWorker>> workers_;
};

// Restricts the calling thread to `cores`. Throws RuntimeError naming the
// core the system refused.
void pin_calling_thread(const std::vector<int>& cores);

}  // namespace switchyard
