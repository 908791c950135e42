// Which operators a target runs: its kind's declaration (ir/device_kind.cc)
// read against the operator's fusion pattern.
#include "placement/target_support.h"

#include <algorithm>

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name) {
  if (!target) return true;
  const DeviceKindInfo* kind = device_kind_info(target->kind());
  if (!kind) return true;
  const std::vector<std::string_view>& refused = kind->operators_not_run;
  return std::find(refused.begin(), refused.end(), op_name) == refused.end();
}

}  // namespace switchyard
