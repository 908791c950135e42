// The attributes of the element-wise operators that take any: clip's bounds
// and cast's target dtype, as typed structs read in one place and checked
// once when the call is built (the registry's check_attrs).
#pragma once

#include "ir/attrs.h"
#include "ir/type.h"

namespace switchyard {

struct ClipAttrs {
  double a_min = 0, a_max = 0;
};
ClipAttrs clip_attrs(const AttrsNode& attrs);
// a_min must not exceed a_max (a NaN bound is refused too).
void check_clip_attrs(const ClipAttrs& attrs);

struct CastAttrs {
  DType dtype = DType::kFloat32;
};
// The registry checked the name (AttrKind::kDType); Error(kType) when not.
CastAttrs cast_attrs(const AttrsNode& attrs);

}  // namespace switchyard
