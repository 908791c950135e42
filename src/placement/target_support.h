// Which operators a target can run, as its device kind declares
// (ir/device_kind.cc): CPU targets run every operator, CUDA targets all but
// batch_norm, so planning moves a free batch_norm off a GPU (to the host)
// and reports one wished onto it.
#pragma once

#include <string>

#include "ir/virtual_device.h"

namespace switchyard {

bool target_can_run(const Target* target, const std::string& op_name);

}  // namespace switchyard
