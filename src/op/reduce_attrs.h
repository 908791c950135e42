// The reduction family's attributes (sum, mean, max, prod; Relay's axis,
// keepdims and exclude) as one typed struct, read in one place and checked
// once when the call is built (the registry's check_attrs), so kernels,
// passes and back ends never spell an attribute name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace switchyard {

struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axis;  // None: every axis; a list (maybe empty, maybe negative)
  bool keepdims = false;                     // reduced dimensions stay, as 1s
  bool exclude = false;                      // reduce the dimensions axis does *not* name
};

ReduceAttrs reduce_attrs(const AttrsNode& attrs);
// What needs no type: no dimension named twice by the same number
// (axis [0, -2] of a rank-2 input is found by the type relation).
void check_reduce_attrs(const std::string& op, const ReduceAttrs& attrs);

// The dimensions reduced from an input of `rank`, sorted; Error(kType)
// naming `op` for an axis out of range or named twice.
std::vector<int64_t> reduced_axes(int64_t rank, const ReduceAttrs& attrs, const std::string& op);

}  // namespace switchyard
