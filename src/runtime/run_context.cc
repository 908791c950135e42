// The runtime services of one run (see run_context.h).
#include "runtime/run_context.h"

#include "runtime/runtime_error.h"

namespace switchyard {

int64_t nanoseconds_since(RunClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(RunClock::now() - start).count();
}

// A kernel's elements hit an operator's documented error: the run fails
// naming the kernel, where it came from and each fault.
void fail_with_faults(RunContext& run, int kernel, int faults) {
  static const std::pair<int, const char*> kFaults[] = {
      {SY_FAULT_INTEGER_DIVISION_BY_ZERO, "integer division by zero"},
      {SY_FAULT_NEGATIVE_INTEGER_EXPONENT, "integer power with a negative exponent"},
      {SY_FAULT_INDEX_OUT_OF_RANGE, "take index out of range (mode \"fast\")"}};
  std::string what;
  for (auto [bit, name] : kFaults)
    if (faults & bit) what += (what.empty() ? "" : "; ") + std::string(name);
  if (what.empty()) what = "unknown fault bits " + std::to_string(faults);
  const std::string& span = run.manifest->kernels[size_t(kernel)].span;
  run.fail(run.kernel_label(kernel) + (span.empty() ? "" : " (from " + span + ")") + ": " + what);
}

namespace {

void service_parallel_for(void* ctx, int device_index, int64_t n, int64_t grain, SyParallelBody body, void* closure) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    if (!run.valid_device(device_index)) {
      run.fail("parallel work on device index " + std::to_string(device_index) + ", but the artifact has " +
               std::to_string(run.devices->size()) + " devices");
      return;
    }
    int kernel = run.open_kernel;
    if (kernel >= 0 && run.manifest->kernels[size_t(kernel)].device != device_index)
      run.fail(run.kernel_label(kernel) + " is planned on " +
               run.device_name(run.manifest->kernels[size_t(kernel)].device) + " but ran parallel work on " +
               run.device_name(device_index));
    (*run.devices)[size_t(device_index)]->parallel_for(
        n, grain, [body, closure](int64_t begin, int64_t end) { body(closure, begin, end); });
  } catch (const std::exception& e) {
    run.fail(std::string("parallel work failed: ") + e.what());
  }
}

void service_device_copy(void* ctx, int copy_index, int dst_device, void* dst, int src_device, const void* src,
                         size_t bytes) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    const std::vector<ManifestCopy>& copies = run.manifest->copies;
    if (copy_index < 0 || size_t(copy_index) >= copies.size()) {
      run.fail("copy " + std::to_string(copy_index) + " is not in the manifest (" + std::to_string(copies.size()) +
               " copies)");
      return;
    }
    if (!run.valid_device(src_device) || !run.valid_device(dst_device)) {
      run.fail("copy " + std::to_string(copy_index) + " names a device index out of range");
      return;
    }
    const ManifestCopy& planned = copies[size_t(copy_index)];
    if (planned.src_device != src_device || planned.dst_device != dst_device || planned.bytes != bytes)
      run.fail("copy " + std::to_string(copy_index) + " moved " + std::to_string(bytes) + " bytes from " +
               run.device_name(src_device) + " to " + run.device_name(dst_device) + ", but the manifest plans " +
               std::to_string(planned.bytes) + " bytes from " + run.device_name(planned.src_device) + " to " +
               run.device_name(planned.dst_device));
    RunClock::time_point start = run.record_stats ? RunClock::now() : RunClock::time_point();
    copy_between_devices(*(*run.devices)[size_t(dst_device)], dst, *(*run.devices)[size_t(src_device)], src, bytes);
    if (run.record_stats)
      run.stats.copies.push_back({copy_index, src_device, dst_device, bytes, nanoseconds_since(start)});
  } catch (const std::exception& e) {
    run.fail("copy " + std::to_string(copy_index) + " failed: " + e.what());
  }
}

void service_kernel_begin(void* ctx, int kernel_index) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (kernel_index < 0 || size_t(kernel_index) >= run.manifest->kernels.size()) {
    run.fail("kernel " + std::to_string(kernel_index) + " is not in the manifest (" +
             std::to_string(run.manifest->kernels.size()) + " kernels)");
    return;
  }
  if (run.open_kernel >= 0)
    run.fail(run.kernel_label(kernel_index) + " began inside " + run.kernel_label(run.open_kernel));
  run.open_kernel = kernel_index;
  if (run.record_stats) run.kernel_start = RunClock::now();
}

void service_kernel_end(void* ctx, int kernel_index) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (kernel_index < 0 || kernel_index != run.open_kernel) {
    run.fail("kernel " + std::to_string(kernel_index) + " ended without beginning");
    return;
  }
  run.open_kernel = -1;
  if (!run.record_stats) return;
  try {
    const ManifestKernel& kernel = run.manifest->kernels[size_t(kernel_index)];
    run.stats.kernels.push_back({kernel_index, kernel.name, kernel.device, nanoseconds_since(run.kernel_start)});
  } catch (const std::exception& e) {
    run.fail(std::string("recording a kernel failed: ") + e.what());
  }
}

void service_run_primitive(void* ctx, int device_index, const void* const* inputs, void* const* outputs) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    int kernel = run.open_kernel;
    if (kernel < 0) return run.fail("a oneDNN primitive ran outside any kernel");
    const KernelPrimitive& planned = (*run.kernel_primitives)[size_t(kernel)];
    if (!planned.primitive && !planned.device_primitive)
      return run.fail(run.kernel_label(kernel) + " ran a library primitive, but plans none");
    if (run.manifest->kernels[size_t(kernel)].device != device_index)
      return run.fail(run.kernel_label(kernel) + " is planned on " +
                      run.device_name(run.manifest->kernels[size_t(kernel)].device) +
                      " but ran its primitive on device index " + std::to_string(device_index));
    if (planned.device_primitive) {
      (*run.devices)[size_t(device_index)]->run_library_primitive(*planned.device_primitive, inputs, outputs,
                                                                  run.primitive_workspaces[device_index]);
      return;
    }
    int weights_input = planned.primitive->spec().weights_input;
    if (planned.weights_address && inputs[weights_input] != planned.weights_address)
      return run.fail(run.kernel_label(kernel) + " passed other weights than the manifest's weight " +
                      std::to_string(run.manifest->kernels[size_t(kernel)].weights));
    if (planned.depthwise_weights_address) {
      for (const PrimitivePostOp& post : planned.primitive->spec().post_ops)
        if (post.kind == PrimitivePostOp::Kind::kDepthwise && inputs[post.input] != planned.depthwise_weights_address)
          return run.fail(run.kernel_label(kernel) + " passed other depthwise weights than the manifest's weight " +
                          std::to_string(run.manifest->kernels[size_t(kernel)].depthwise_weights));
    }
    Device& device = *(*run.devices)[size_t(device_index)];
    planned.primitive->execute(
        inputs, outputs, planned.weights.get(), planned.depthwise_weights.get(), run.primitive_workspaces[device_index],
        [&device](int64_t n, int64_t grain, const ParallelBody& body) { device.parallel_for(n, grain, body); });
  } catch (const std::exception& e) {
    run.fail(run.kernel_label(run.open_kernel) + ": its library primitive failed: " + e.what());
  }
}

void service_kernel_fault(void* ctx, int faults) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (run.open_kernel < 0) return run.fail("a kernel fault was reported outside any kernel");
  fail_with_faults(run, run.open_kernel, faults);
}

// Queues a function of the open kernel's device image on its GPU's stream,
// its parameter the kernel's buffers (and its fault word).
void service_launch_kernel(void* ctx, int device_index, int function, int64_t grid, int block,
                           const void* const* buffers, int buffer_count) {
  auto& run = *static_cast<RunContext*>(ctx);
  int kernel = run.open_kernel;
  try {
    if (kernel < 0) return run.fail("a device function was launched outside any kernel");
    const ManifestKernel& planned = run.manifest->kernels[size_t(kernel)];
    const std::vector<void*>& functions = (*run.kernel_functions)[size_t(kernel)];
    if (planned.device != device_index)
      return run.fail(run.kernel_label(kernel) + " is planned on " + run.device_name(planned.device) +
                      " but launched on device index " + std::to_string(device_index));
    if (function < 0 || size_t(function) >= functions.size())
      return run.fail(run.kernel_label(kernel) + " launched function " + std::to_string(function) + ", but its image has " +
                      std::to_string(functions.size()));
    if (buffer_count < 0 || grid <= 0 || block <= 0)
      return run.fail(run.kernel_label(kernel) + " launched with " + std::to_string(buffer_count) + " buffers, grid " +
                      std::to_string(grid) + ", block " + std::to_string(block));
    std::vector<const void*> param(buffers, buffers + buffer_count);
    if (planned.may_fault) param.push_back(run.fault_words[kernel]);
    (*run.devices)[size_t(device_index)]->launch(functions[size_t(function)], grid, block, param.data(),
                                                 param.size() * sizeof(void*));
  } catch (const std::exception& e) {
    run.fail(run.kernel_label(kernel) + ": " + e.what());
  }
}

void service_device_move(void* ctx, int device_index, void* dst, const void* src, size_t bytes) {
  auto& run = *static_cast<RunContext*>(ctx);
  try {
    if (!run.valid_device(device_index))
      return run.fail("a move on device index " + std::to_string(device_index) + ", but the artifact has " +
                      std::to_string(run.devices->size()) + " devices");
    (*run.devices)[size_t(device_index)]->copy_within(dst, src, bytes);
  } catch (const std::exception& e) {
    run.fail("a move on " + run.device_name(device_index) + " failed: " + e.what());
  }
}

void service_signal_event(void* ctx, int event) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (!run.events || event < 0 || event >= run.events->count())
    return run.fail("event " + std::to_string(event) + " signalled, but the run has " +
                    std::to_string(run.events ? run.events->count() : 0) + " events");
  run.events->signal(event);
}

int service_wait_event(void* ctx, int event) {
  auto& run = *static_cast<RunContext*>(ctx);
  if (!run.events || event < 0 || event >= run.events->count()) {
    run.fail("a wait for event " + std::to_string(event) + ", but the run has " +
             std::to_string(run.events ? run.events->count() : 0) + " events");
    return 1;
  }
  return run.events->wait(event) ? 0 : 1;
}

}  // namespace

SyRuntimeServices runtime_services(RunContext* run) {
  return SyRuntimeServices{run,
                           service_parallel_for,
                           service_device_copy,
                           service_kernel_begin,
                           service_kernel_end,
                           service_run_primitive,
                           service_kernel_fault,
                           service_launch_kernel,
                           service_device_move,
                           service_signal_event,
                           service_wait_event};
}

}  // namespace switchyard
