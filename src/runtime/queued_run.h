// Running a model's device queues at once (model_abi.h, SyModelSchedule):
// the schedule model.so exports, checked against the manifest, with a
// worker per queue; and one run over them.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/device_queues.h"
#include "runtime/manifest.h"
#include "runtime/run_context.h"
#include "switchyard/model_abi.h"

namespace switchyard {

struct ModelQueues {
  SyModelRunQueueFn run_queue = nullptr;
  std::vector<int> queue_devices;  // by queue
  int event_count = 0;
  // By queue: the primitive scratch its worker hands every run's steps, where
  // its device is a CPU (its worker runs one step at a time, whichever run it
  // belongs to); a null buffer: each run's own, from its workspace. One
  // scratch per worker stays in its core's cache from one request to the
  // next, where the scratch of each request in flight would be cold again.
  // Declared before `workers`, so it goes after them: destroying the
  // workers ends every request in flight, whose steps still use it.
  std::vector<DeviceBuffer> worker_scratch;
  std::unique_ptr<QueueWorkers> workers;
};

// Gives each queue on a CPU device a scratch of its own (worker_scratch),
// of `scratch_bytes[device]`, where that is not 0.
void give_workers_scratch(ModelQueues& queues, const std::vector<std::unique_ptr<Device>>& devices,
                          const std::vector<size_t>& scratch_bytes);

// The most events a schedule may have: far more than the steps of any model
// that is scheduled (lower/queue_schedule.h), so a corrupt count is refused.
constexpr int kMaxScheduleEvents = 1 << 20;

// The queues of the model.so opened as `library`, or null when it runs only
// in order (no schedule, or fewer than two queues). Each queue's worker runs
// on `device_cores[device]` when that is not empty. Throws RuntimeError
// naming `model_path` for a schedule that does not fit the manifest.
std::unique_ptr<ModelQueues> load_model_queues(void* library, const Manifest& manifest,
                                               const std::vector<std::vector<int>>& device_cores,
                                               const std::string& model_path);

// One run of a model's queues: its events, and per queue a context (its
// open kernel and stats, `run`'s settings) and services. `run` and the
// memory `args` points to must outlive it.
class QueuedRun {
 public:
  QueuedRun(const ModelQueues& queues, RunContext& run, const SyRunArgs& args);
  QueuedRun(const QueuedRun&) = delete;
  QueuedRun& operator=(const QueuedRun&) = delete;

  // Runs queue `q` on the calling thread (its worker). True for the call
  // that returned last: every queue's writes are then visible to it.
  bool run_queue(int q);
  // Once every queue has returned: their kernels and copies into `run`'s
  // stats (queue by queue), an unended kernel into run.error. Returns the
  // first non-zero status a queue returned, else 0.
  int finish();

 private:
  const ModelQueues& queues_;
  RunContext& run_;
  RunEvents events_;
  std::vector<std::unique_ptr<RunContext>> contexts_;
  // For each queue whose worker has a scratch: its context's primitive workspaces, by device index.
  std::vector<std::vector<void*>> primitive_workspaces_;
  std::vector<SyRuntimeServices> services_;
  std::vector<SyRunArgs> args_;
  std::vector<int> status_;
  std::atomic<size_t> running_;
};

// Runs every queue on its worker with `args` and returns when all have
// returned: QueuedRun::finish's status, the first failure in run.error.
int run_model_queues(const ModelQueues& queues, RunContext& run, const SyRunArgs& args);

}  // namespace switchyard
