// Which operators a target can run, as its device kind declares
// (ir/device_kind.cc). CPU targets run every operator; the CUDA backend does
// not exist yet, so a CUDA target runs none and planning moves free
// operators off it (to the host) or reports those wished onto it.
#pragma once

#include <string>

#include "ir/virtual_device.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name);

}  // namespace switchyard
