// Which operators a target runs: its kind's declaration (ir/device_kind.cc)
// read against the operator's fusion pattern.
#include "device/target_support.h"

#include "op/registry.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name) {
  if (!target) return true;
  const DeviceKindInfo* kind = device_kind_info(target->kind());
  if (!kind || kind->operators == OperatorSupport::kEvery) return true;
  const OpDef* def = find_op_def(op_name);
  return !def || def->pattern != OpPattern::kAnchor;
}

}  // namespace switchyard
