// The matrix products' attributes (see linear_attrs.h).
#include "op/linear_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

LinearAttrs linear_attrs(const AttrsNode& attrs) {
  return {.transpose_a = attr_read::boolean_or(attrs, "transpose_a", false),
          .transpose_b = attr_read::boolean_or(attrs, "transpose_b", false),
          .units = attr_read::optional_integer_or_none(attrs, "units")};
}

void check_linear_attrs(const std::string& op, const LinearAttrs& attrs) {
  if (attrs.units && *attrs.units <= 0) type_fail(op, "units must be positive, got " + std::to_string(*attrs.units));
}

std::vector<std::pair<std::string, AttrValue>> attr_entries(const LinearAttrs& attrs) {
  return {{"transpose_a", attrs.transpose_a}, {"transpose_b", attrs.transpose_b}};
}

}  // namespace switchyard
