// The reduction family's attributes (see reduce_attrs.h).
#include "op/reduce_attrs.h"

#include <algorithm>

#include "op/attr_read.h"
#include "op/relation_helpers.h"

namespace switchyard {

ReduceAttrs reduce_attrs(const AttrsNode& attrs) {
  return {.axis = attr_read::optional_integers(attrs, "axis"),
          .keepdims = attr_read::boolean(attrs, "keepdims"),
          .exclude = attr_read::boolean(attrs, "exclude")};
}

void check_reduce_attrs(const std::string& op, const ReduceAttrs& attrs) {
  if (!attrs.axis) return;
  std::vector<int64_t> sorted = *attrs.axis;
  std::sort(sorted.begin(), sorted.end());
  auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) type_fail(op, "axis " + ints_str(*attrs.axis) + " names " + std::to_string(*twice) + " twice");
}

std::vector<int64_t> reduced_axes(int64_t rank, const ReduceAttrs& attrs, const std::string& op) {
  std::vector<int64_t> axes;
  if (!attrs.axis) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  std::vector<bool> named(size_t(rank), false);
  for (int64_t a : *attrs.axis) {
    int64_t n = normalize_axis(a, rank, op, "axis");
    if (named[size_t(n)]) type_fail(op, "axis " + ints_str(*attrs.axis) + " names dimension " + std::to_string(n) + " twice");
    named[size_t(n)] = true;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (named[size_t(i)] != attrs.exclude) axes.push_back(i);
  return axes;
}

}  // namespace switchyard
