// One run of an artifact: the state behind SyRuntimeServices::ctx, and the
// services (runtime/artifact.cc hands them to model.so's entry) that run
// parallel loops, copies and library primitives and record and check each
// kernel and copy against the manifest.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/device.h"
#include "runtime/device_queues.h"
#include "runtime/manifest.h"
#include "switchyard/model_abi.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {

using RunClock = std::chrono::steady_clock;

int64_t nanoseconds_since(RunClock::time_point start);

// What a kernel's library primitive needs at run time, made at load time.
struct KernelPrimitive {
  const DnnlPrimitive* primitive = nullptr;
  const DeviceLibraryPrimitive* device_primitive = nullptr;  // instead, on a device with its own library
  std::shared_ptr<const PreparedWeights> weights;  // constant weights in its layout, if it reorders them
  const void* weights_address = nullptr;           // where the kernel must pass those weights from
  // The same for the weights of a depthwise convolution it fuses.
  std::shared_ptr<const PreparedWeights> depthwise_weights;
  const void* depthwise_weights_address = nullptr;
};

// One run's state behind SyRuntimeServices::ctx. kernel_begin, kernel_end
// and device_copy come from the thread that called sy_model_run;
// parallel_for may also come from inside a parallel body. Where the device
// queues run at once, each queue has a context of its own (its open kernel
// and its stats) whose `root` keeps the run's error.
struct RunContext {
  const Manifest* manifest = nullptr;
  const std::vector<std::unique_ptr<Device>>* devices = nullptr;
  const std::vector<KernelPrimitive>* kernel_primitives = nullptr;  // by manifest kernel
  const std::vector<std::vector<void*>>* kernel_functions = nullptr;  // by manifest kernel: its image's functions
  void* const* fault_words = nullptr;  // by manifest kernel: a device image's fault word, if it may fault
  void* const* primitive_workspaces = nullptr;                      // by device index
  bool record_stats = true;
  RunStats stats;
  int open_kernel = -1;
  RunClock::time_point kernel_start;
  std::mutex error_mutex;
  std::string error;  // the first broken rule; the run fails with it
  RunContext* root = nullptr;   // the run's context, for a queue's
  RunEvents* events = nullptr;  // the events of queues that run at once

  void fail(const std::string& message) {
    RunContext& owner = root ? *root : *this;
    {
      std::lock_guard<std::mutex> lock(owner.error_mutex);
      if (owner.error.empty()) owner.error = message;
    }
    if (events) events->stop();  // the other queues stop waiting
  }
  bool valid_device(int index) const { return index >= 0 && size_t(index) < devices->size(); }
  const std::string& device_name(int index) const { return (*devices)[size_t(index)]->name(); }
  std::string kernel_label(int index) const {
    return "kernel " + std::to_string(index) + " '" + manifest->kernels[size_t(index)].name + "'";
  }
};

// The services of one run, their context `run`.
SyRuntimeServices runtime_services(RunContext* run);

// Fails the run naming `kernel`, where it came from and each fault bit a
// device image raised.
void fail_with_faults(RunContext& run, int kernel, int faults);

}  // namespace switchyard
