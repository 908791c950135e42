// The attributes of the operators that scan one axis with a kernel of their
// own, cumsum and topk_indices, as typed structs read in one place and
// checked once when the call is built (the registry's check_attrs).
#pragma once

#include <cstdint>
#include <string>

#include "ir/attrs.h"

namespace switchyard {

struct CumsumAttrs {
  int64_t axis = 0;        // maybe negative
  bool exclusive = false;  // each sum leaves out its own element
  bool reverse = false;    // from the end of the axis
};
CumsumAttrs cumsum_attrs(const AttrsNode& attrs);

struct TopkAttrs {
  int64_t k = 1;  // how many positions; at most the axis's extent (the type relation checks that)
  int64_t axis = -1;
  bool largest = true;  // else the smallest
};
TopkAttrs topk_attrs(const AttrsNode& attrs);
// k must be at least 1.
void check_topk_attrs(const std::string& op, const TopkAttrs& attrs);

}  // namespace switchyard
