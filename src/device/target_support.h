// Which operators a target can run, as its device kind declares
// (ir/device_kind.cc): CPU targets run every operator, CUDA targets all but
// anchors (their kernels are library calls CUDA has no generator for yet),
// so planning moves free anchors off a GPU (to the host) and reports those
// wished onto it.
#pragma once

#include <string>

#include "ir/virtual_device.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name);

}  // namespace switchyard
