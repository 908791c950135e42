// Running a model's device queues at once (model_abi.h, SyModelSchedule):
// the schedule model.so exports, checked against the manifest, with a
// worker per queue; and one run over them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/device_queues.h"
#include "runtime/manifest.h"
#include "runtime/run_context.h"
#include "switchyard/model_abi.h"

namespace switchyard {

struct ModelQueues {
  SyModelRunQueueFn run_queue = nullptr;
  std::vector<int> queue_devices;  // by queue
  int event_count = 0;
  std::unique_ptr<QueueWorkers> workers;
};

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

// Runs every queue on its worker with `args` (its own services each) and
// returns when all have returned: a queue's kernels and copies recorded in
// `run`'s stats (queue by queue), the first failure in run.error. Returns
// the first non-zero status a queue returned, else 0.
int run_model_queues(const ModelQueues& queues, RunContext& run, const SyRunArgs& args);

}  // namespace switchyard
