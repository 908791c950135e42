// The operator support table per target kind.
#include "device/target_support.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name) {
  if (!target) return true;
  switch (target->kind()) {
    case DeviceKind::kCPU: return true;
    case DeviceKind::kCUDA: return op_name == "on_device" || op_name == "device_copy";
    case DeviceKind::kUnconstrained: return true;
  }
  return true;
}

}  // namespace switchyard
