// What attribute-dependent operators mean for shapes: sliding windows, reduce
// axes, reshape targets, permutations, slices and splits. Type relations use
// these, and so can the interpreter and code generation, so every layer reads
// an operator's attributes the same way (Relay's semantics, docs/operators.md).
// Each function throws Error(kType) naming the operator when the attributes
// do not fit the shape.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/attrs.h"
#include "ir/dim.h"

namespace switchyard {

// Window padding of nn.conv2d and the pools: 1 value pads every side, 2 are
// (vertical, horizontal), 4 are (top, left, bottom, right).
struct Padding2D {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
};
Padding2D expand_padding(const std::vector<int64_t>& padding);
// A 1- or 2-value list (pool_size) as (height, width).
std::pair<int64_t, int64_t> expand_pair(const std::vector<int64_t>& values);

// Output extent of a sliding window along one dimension, as Relay computes it:
// (input + pads - dilated_kernel) / stride + 1, rounded up when `ceil_mode`.
// `dimension` names it in errors ("height").
int64_t window_output_extent(int64_t input, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                             int64_t dilation, bool ceil_mode, const std::string& op, const std::string& dimension);

// The axes a reduction (sum, mean, max) reduces, sorted, from its `axis` and
// `exclude` attributes: None = every axis; `exclude` takes the complement.
std::vector<int64_t> reduce_axes(int64_t rank, const AttrsNode& attrs, const std::string& op);
// The shape after reducing `axes` (sorted), kept as 1s when `keepdims`.
std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool keepdims);

// reshape's target: newshape with 0 (copy the input dimension at that
// position) and one -1 (inferred) resolved.
std::vector<int64_t> reshape_target(const std::vector<int64_t>& shape, const std::vector<int64_t>& newshape,
                                    const std::string& op);

// The same for dimension expressions, of the input and of the target: 0
// copies a (possibly symbolic) dimension, -1 is the exact quotient of the
// element counts, which must be provably exact ((n, 196, 768) to
// [-1, 12, 64] gives 196*n), any other entry is the dimension itself
// ((batch*seq, 16) to (seq, batch, 16)); without a -1 the counts must be
// equal expressions.
std::vector<DimExpr> reshape_target(const std::vector<DimExpr>& dims, const std::vector<DimExpr>& newshape,
                                    const std::string& op);
// "[-1, 196, 12, 64]", "[seq, batch, 16]": a target as its attribute reads, for messages.
std::string newshape_text(const std::vector<DimExpr>& newshape);

// transpose's permutation (output dimension i reads input dimension perm[i]):
// None reverses the dimensions.
std::vector<int64_t> transpose_permutation(int64_t rank, const AttrsNode& attrs, const std::string& op);

// squeeze's result: None drops every dimension of size 1; a list drops
// those dimensions, each of which must have size 1.
std::vector<int64_t> squeeze_shape(const std::vector<int64_t>& shape, const AttrsNode& attrs, const std::string& op);

// strided_slice, per input dimension: element k of the output along that
// dimension reads input index begin + k * stride (stride may be negative).
// Dimensions the slice does not name keep {0, 1, extent}.
struct SliceAxis {
  int64_t begin = 0, stride = 1, length = 0;
};
std::vector<SliceAxis> strided_slice_axes(const std::vector<int64_t>& shape, const AttrsNode& attrs,
                                          const std::string& op);

// split's piece sizes along an axis of `extent`: an int N gives N equal pieces
// (N must divide the extent); a list of ascending indices gives the pieces
// between them.
std::vector<int64_t> split_sizes(int64_t extent, const AttrValue& indices_or_sections, const std::string& op);

}  // namespace switchyard
