// The scans' attributes (see scan_attrs.h).
#include "op/scan_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

CumsumAttrs cumsum_attrs(const AttrsNode& attrs) {
  return {.axis = attr_read::required_int(attrs, "axis"),
          .exclusive = attr_read::bool_or(attrs, "exclusive", false),
          .reverse = attr_read::bool_or(attrs, "reverse", false)};
}

TopkAttrs topk_attrs(const AttrsNode& attrs) {
  return {.k = attr_read::required_int(attrs, "k"),
          .axis = attr_read::int_or(attrs, "axis", -1),
          .largest = attr_read::bool_or(attrs, "largest", true)};
}

void check_topk_attrs(const std::string& op, const TopkAttrs& attrs) {
  if (attrs.k < 1) type_fail(op, "k must be at least 1, got " + std::to_string(attrs.k));
}

}  // namespace switchyard
