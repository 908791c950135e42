// InferType wrapped as a pass (the analysis itself is transform/infer_type.h).
#pragma once

#include "transform/pass.h"

namespace switchyard {

Pass InferType();

}  // namespace switchyard
