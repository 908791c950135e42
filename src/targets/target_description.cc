// The target descriptions by device kind. A new kind's description is in its
// own folder (targets/<kind>/compiler) plus one row here.
#include "targets/target_description.h"

#include "targets/cpu/compiler/cpu_target.h"

namespace switchyard {

const std::vector<const TargetDescription*>& target_descriptions() {
  static const std::vector<const TargetDescription*> descriptions = {
      &cpu_target_description(),
  };
  return descriptions;
}

const TargetDescription* target_description_for(DeviceKind kind) {
  for (const TargetDescription* d : target_descriptions())
    if (d->kind == kind) return d;
  return nullptr;
}

}  // namespace switchyard
