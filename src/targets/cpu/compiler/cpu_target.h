// The CPU target's description (its row of targets/target_description.cc):
// oneDNN's primitives and the layouts they prefer on this machine.
#pragma once

#include "targets/target_description.h"

namespace switchyard {

const TargetDescription& cpu_target_description();

}  // namespace switchyard
