// The attributes of the operators that work along one axis of their data
// with per-row or per-channel parameters: nn.softmax and nn.bias_add (an
// axis), nn.layer_norm and nn.batch_norm (an axis, epsilon, center and
// scale). One typed struct, read in one place and checked once when the
// call is built (the registry's check_attrs).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/attrs.h"

namespace switchyard {

struct NormAttrs {
  int64_t axis = -1;  // maybe negative: normalize against the data's rank
  double epsilon = 1e-5;
  bool center = true;  // add beta
  bool scale = true;   // multiply by gamma
};

// What the call lacks (softmax has no epsilon) keeps the defaults above.
NormAttrs norm_attrs(const AttrsNode& attrs);
// epsilon must be a non-negative number (a NaN is refused too).
void check_norm_attrs(const std::string& op, const NormAttrs& attrs);
// The attributes of an nn.layer_norm or nn.batch_norm call with these values
// (for make_op_call; softmax and bias_add take only an axis).
std::vector<std::pair<std::string, AttrValue>> attr_entries(const NormAttrs& attrs);

}  // namespace switchyard
