// Whether a call only takes one contiguous range of its source's row-major
// bytes (strided slices of whole trailing rows, through reshape, squeeze
// and expand_dims), so that lowering can copy that range in the entry
// instead of generating a kernel for it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

// The element offset in `source` where the row-major elements of `result`
// start, when `result` is a chain of reshape, squeeze, expand_dims and
// strided_slice calls over `source` (each with its one argument the next
// link) whose elements are one contiguous range of the source's, in order;
// nullopt otherwise (another operator, a step over elements, a slice of
// columns that leaves gaps).
std::optional<int64_t> contiguous_range_offset(const Expr& result, const Expr& source);

// The element offset of a strided slice of a tensor of `shape` when the
// sliced elements are one contiguous row-major range: on every axis before
// the first one the slice takes more than one element of, one element; on
// that axis, stride 1; on every axis after it, the whole extent. `begin`,
// `stride` and `length` hold one entry per axis (shape_rules.h's SliceAxis).
std::optional<int64_t> contiguous_slice_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& stride,
                                               const std::vector<int64_t>& length);

}  // namespace switchyard
