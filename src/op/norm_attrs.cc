// The axis-and-normalisation family's attributes (see norm_attrs.h).
#include "op/norm_attrs.h"

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

NormAttrs norm_attrs(const AttrsNode& attrs) {
  NormAttrs defaults;
  return {.axis = attr_read::integer(attrs, "axis"),
          .epsilon = attr_read::number_or(attrs, "epsilon", defaults.epsilon),
          .center = attr_read::boolean_or(attrs, "center", defaults.center),
          .scale = attr_read::boolean_or(attrs, "scale", defaults.scale)};
}

void check_norm_attrs(const std::string& op, const NormAttrs& attrs) {
  if (!(attrs.epsilon >= 0)) type_fail(op, "epsilon must not be negative, got " + attr_value_to_string(attrs.epsilon));
}

std::vector<std::pair<std::string, AttrValue>> attr_entries(const NormAttrs& attrs) {
  return {{"axis", attrs.axis}, {"epsilon", attrs.epsilon}, {"center", attrs.center}, {"scale", attrs.scale}};
}

}  // namespace switchyard
