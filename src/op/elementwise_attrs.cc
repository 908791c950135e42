// The element-wise operators' attributes (see elementwise_attrs.h).
#include "op/elementwise_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"
#include "runtime/clipped_text.h"

namespace switchyard {

ClipAttrs clip_attrs(const AttrsNode& attrs) {
  return {.a_min = attr_read::number(attrs, "a_min"), .a_max = attr_read::number(attrs, "a_max")};
}

void check_clip_attrs(const ClipAttrs& attrs) {
  if (!(attrs.a_min <= attrs.a_max))
    type_fail("clip", "a_min (" + attr_value_to_string(attrs.a_min) + ") must not exceed a_max (" +
                          attr_value_to_string(attrs.a_max) + ")");
}

CastAttrs cast_attrs(const AttrsNode& attrs) {
  std::string name = attr_read::string(attrs, "dtype");
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) type_fail("cast", "unknown dtype \"" + clipped_text(name) + "\"");
  return {*dtype};
}

}  // namespace switchyard
