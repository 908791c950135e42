// The scans' attributes (see scan_attrs.h).
#include "op/scan_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

CumsumAttrs cumsum_attrs(const AttrsNode& attrs) {
  return {.axis = attr_read::integer(attrs, "axis"),
          .exclusive = attr_read::boolean(attrs, "exclusive"),
          .reverse = attr_read::boolean(attrs, "reverse")};
}

TopkAttrs topk_attrs(const AttrsNode& attrs) {
  return {.k = attr_read::integer(attrs, "k"),
          .axis = attr_read::integer(attrs, "axis"),
          .largest = attr_read::boolean(attrs, "largest")};
}

void check_topk_attrs(const std::string& op, const TopkAttrs& attrs) {
  if (attrs.k < 1) type_fail(op, "k must be at least 1, got " + std::to_string(attrs.k));
}

}  // namespace switchyard
