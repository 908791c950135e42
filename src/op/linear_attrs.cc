// The matrix products' attributes (see linear_attrs.h).
#include "op/linear_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

LinearAttrs linear_attrs(const AttrsNode& attrs) {
  return {.transpose_a = attr_read::bool_or(attrs, "transpose_a", false),
          .transpose_b = attr_read::bool_or(attrs, "transpose_b", false),
          .units = attr_read::optional_int(attrs, "units")};
}

void check_linear_attrs(const std::string& op, const LinearAttrs& attrs) {
  if (attrs.units && *attrs.units <= 0) type_fail(op, "units must be positive, got " + std::to_string(*attrs.units));
}

}  // namespace switchyard
