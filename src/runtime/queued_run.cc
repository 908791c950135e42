// A model's device queues run at once (see queued_run.h).
#include "runtime/queued_run.h"

#include <dlfcn.h>

#include <set>

#include "runtime/runtime_error.h"

namespace switchyard {

std::unique_ptr<ModelQueues> load_model_queues(void* library, const Manifest& manifest,
                                               const std::vector<std::vector<int>>& device_cores,
                                               const std::string& model_path) {
  auto schedule_of = reinterpret_cast<SyModelScheduleFn>(dlsym(library, SY_MODEL_SCHEDULE_SYMBOL));
  if (!schedule_of) return nullptr;  // a hand-written model: in order
  const SyModelSchedule* schedule = schedule_of();
  if (!schedule) throw RuntimeError(model_path + ": " SY_MODEL_SCHEDULE_SYMBOL " returned null");
  const std::string where = model_path + ": its schedule (" SY_MODEL_SCHEDULE_SYMBOL ")";
  if (schedule->queue_count < 0 || size_t(schedule->queue_count) > manifest.devices.size())
    throw RuntimeError(where + " has " + std::to_string(schedule->queue_count) + " queues, but the manifest has " +
                       std::to_string(manifest.devices.size()) + " devices");
  if (schedule->event_count < 0 || schedule->event_count > kMaxScheduleEvents)
    throw RuntimeError(where + " has " + std::to_string(schedule->event_count) + " events (at most " +
                       std::to_string(kMaxScheduleEvents) + ")");
  if (schedule->queue_count < 2) return nullptr;
  auto queues = std::make_unique<ModelQueues>();
  queues->run_queue = reinterpret_cast<SyModelRunQueueFn>(dlsym(library, SY_MODEL_RUN_QUEUE_SYMBOL));
  if (!queues->run_queue) throw RuntimeError(model_path + ": missing symbol " SY_MODEL_RUN_QUEUE_SYMBOL);
  queues->event_count = schedule->event_count;
  std::set<int> seen;
  std::vector<std::vector<int>> cores_of_queue;
  for (int q = 0; q < schedule->queue_count; ++q) {
    int device = schedule->queue_devices[q];
    if (device < 0 || size_t(device) >= manifest.devices.size() || !seen.insert(device).second)
      throw RuntimeError(where + ": queue " + std::to_string(q) + " runs on device index " + std::to_string(device) +
                         ", not a device of the manifest without another queue");
    queues->queue_devices.push_back(device);
    cores_of_queue.push_back(size_t(device) < device_cores.size() ? device_cores[size_t(device)] : std::vector<int>());
  }
  queues->workers = std::make_unique<QueueWorkers>(cores_of_queue);
  return queues;
}

void give_workers_scratch(ModelQueues& queues, const std::vector<std::unique_ptr<Device>>& devices,
                          const std::vector<size_t>& scratch_bytes) {
  queues.worker_scratch.clear();
  queues.worker_scratch.resize(queues.queue_devices.size());
  for (size_t q = 0; q < queues.queue_devices.size(); ++q) {
    const size_t device = size_t(queues.queue_devices[q]);
    if (devices[device]->kind() == "cpu" && scratch_bytes[device] > 0)
      queues.worker_scratch[q] = DeviceBuffer(*devices[device], scratch_bytes[device]);
  }
}

namespace {

// A queue's own context: the run's settings, its own open kernel and stats.
std::unique_ptr<RunContext> queue_context(RunContext& run, RunEvents& events) {
  auto context = std::make_unique<RunContext>();
  context->manifest = run.manifest;
  context->devices = run.devices;
  context->kernel_primitives = run.kernel_primitives;
  context->kernel_functions = run.kernel_functions;
  context->fault_words = run.fault_words;
  context->primitive_workspaces = run.primitive_workspaces;
  context->record_stats = run.record_stats;
  context->root = &run;
  context->events = &events;
  return context;
}

}  // namespace

QueuedRun::QueuedRun(const ModelQueues& queues, RunContext& run, const SyRunArgs& args)
    : queues_(queues),
      run_(run),
      events_(queues.event_count),
      args_(queues.queue_devices.size(), args),
      status_(queues.queue_devices.size(), 0),
      running_(queues.queue_devices.size()) {
  const size_t count = queues.queue_devices.size();
  services_.reserve(count);  // args_[q].services points into it
  primitive_workspaces_.reserve(count);
  const size_t device_count = run.manifest->devices.size();
  for (size_t q = 0; q < count; ++q) {
    contexts_.push_back(queue_context(run, events_));
    if (q < queues.worker_scratch.size() && queues.worker_scratch[q].data()) {
      primitive_workspaces_.emplace_back(run.primitive_workspaces, run.primitive_workspaces + device_count);
      primitive_workspaces_.back()[size_t(queues.queue_devices[q])] = queues.worker_scratch[q].data();
      contexts_.back()->primitive_workspaces = primitive_workspaces_.back().data();
    }
    services_.push_back(runtime_services(contexts_.back().get()));
    args_[q].services = &services_[q];
  }
}

bool QueuedRun::run_queue(int q) {
  try {
    status_[size_t(q)] = queues_.run_queue(&args_[size_t(q)], q);
  } catch (const std::exception& e) {
    contexts_[size_t(q)]->fail(std::string("queue ") + std::to_string(q) + " failed: " + e.what());
    status_[size_t(q)] = 1;
  }
  if (status_[size_t(q)] != 0) events_.stop();  // a queue that gave up leaves its events unsignalled
  // Release for the queues before, acquire for the last: it reads their stats.
  return running_.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

int QueuedRun::finish() {
  int first_status = 0;
  for (size_t q = 0; q < contexts_.size(); ++q) {
    RunContext& queue = *contexts_[q];
    if (queue.open_kernel >= 0) run_.fail(queue.kernel_label(queue.open_kernel) + " never ended");
    run_.stats.kernels.insert(run_.stats.kernels.end(), queue.stats.kernels.begin(), queue.stats.kernels.end());
    run_.stats.copies.insert(run_.stats.copies.end(), queue.stats.copies.begin(), queue.stats.copies.end());
    if (first_status == 0) first_status = status_[q];
  }
  return first_status;
}

int run_model_queues(const ModelQueues& queues, RunContext& run, const SyRunArgs& args) {
  QueuedRun queued(queues, run, args);
  queues.workers->run([&](int q) { queued.run_queue(q); });
  return queued.finish();
}

}  // namespace switchyard
