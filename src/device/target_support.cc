// Which operators a target runs: its kind's declaration (ir/device_kind.cc).
#include "device/target_support.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name) {
  if (!target) return true;
  const DeviceKindInfo* kind = device_kind_info(target->kind());
  return !kind || kind->can_run(op_name);
}

}  // namespace switchyard
