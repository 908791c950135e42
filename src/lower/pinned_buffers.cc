// plan_pinned_buffers: host buffers that copies move to and from a GPU live
// in page-locked memory. From pageable memory the driver first copies
// through a staging buffer of its own, at a fraction of the bus's speed.
#include "ir/device_kind.h"
#include "lower/lower.h"
#include "runtime/manifest.h"

namespace switchyard {

void plan_pinned_buffers(LoweredProgram& program, const CompilationConfig& config) {
  auto is_host = [&](int device) {
    const DeviceKindInfo* kind = device_kind_info(config.devices.at(size_t(device))->kind());
    return kind && kind->can_be_host;
  };
  auto pin = [&](int b) {
    LoweredBuffer& buffer = program.buffers[size_t(b)];
    // A scope the model states is kept.
    if (buffer.kind == LoweredBuffer::Kind::kIntermediate && buffer.scope == "global") buffer.scope = kPinnedScope;
  };
  for (const LoweredStep& step : program.steps) {
    if (step.kind != LoweredStep::Kind::kCopy) continue;
    const LoweredCopy& copy = program.copies[size_t(step.index)];
    bool from_host = is_host(copy.src_device), to_host = is_host(copy.dst_device);
    if (from_host && !to_host) pin(step.inputs.at(0));
    if (to_host && !from_host) pin(step.outputs.at(0));
  }
}

}  // namespace switchyard
