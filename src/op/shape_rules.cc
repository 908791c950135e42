// Shape rules of attribute-dependent operators (see shape_rules.h).
#include "op/shape_rules.h"

#include <algorithm>
#include <limits>

#include "op/movement_attrs.h"
#include "op/reduce_attrs.h"
#include "op/relation_helpers.h"
#include "runtime/clipped_text.h"

namespace switchyard {

Padding2D expand_padding(const std::vector<int64_t>& p) {
  if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
  if (p.size() == 4) return {p[0], p[1], p[2], p[3]};
  return {};
}

std::pair<int64_t, int64_t> expand_pair(const std::vector<int64_t>& values) {
  if (values.size() == 1) return {values[0], values[0]};
  if (values.size() == 2) return {values[0], values[1]};
  return {1, 1};
}

int64_t window_output_extent(int64_t input, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                             int64_t dilation, bool ceil_mode, const std::string& op, const std::string& dimension) {
  int64_t padded = 0, dilated = 0;
  if (__builtin_add_overflow(input, pad_before, &padded) || __builtin_add_overflow(padded, pad_after, &padded) ||
      __builtin_mul_overflow(kernel - 1, dilation, &dilated) || __builtin_add_overflow(dilated, 1, &dilated))
    type_fail(op, "the padded input " + dimension + " (input " + std::to_string(input) + ", padding " +
                      std::to_string(pad_before) + " + " + std::to_string(pad_after) + ") or the window (kernel " +
                      std::to_string(kernel) + ", dilation " + std::to_string(dilation) + ") overflows int64");
  if (dilated > padded)
    type_fail(op, "the window " + dimension + " " + std::to_string(dilated) +
                      (dilation > 1 ? " (kernel " + std::to_string(kernel) + ", dilation " + std::to_string(dilation) + ")"
                                    : "") +
                      " is larger than the padded input " + dimension + " " + std::to_string(padded) + " (input " +
                      std::to_string(input) + ", padding " + std::to_string(pad_before) + " + " +
                      std::to_string(pad_after) + ")");
  int64_t span = padded - dilated;
  return span / stride + (ceil_mode && span % stride != 0) + 1;
}

std::vector<int64_t> reduce_axes(int64_t rank, const AttrsNode& attrs, const std::string& op) {
  return reduced_axes(rank, reduce_attrs(attrs), op);
}

std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<int64_t> out;
  size_t next = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (next < axes.size() && axes[next] == int64_t(i)) {
      ++next;
      if (keepdims) out.push_back(1);
    } else {
      out.push_back(shape[i]);
    }
  }
  return out;
}

std::vector<int64_t> reshape_target(const std::vector<int64_t>& shape, const std::vector<int64_t>& newshape,
                                    const std::string& op) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  std::vector<int64_t> out(newshape.size());
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < newshape.size(); ++i) {
    int64_t d = newshape[i];
    if (d == 0) {
      if (i >= shape.size())
        type_fail(op, "newshape " + ints_str(newshape) + " copies dimension " + std::to_string(i) + " (0) but x " +
                          shape_str(shape) + " has rank " + std::to_string(shape.size()));
      d = shape[i];
    } else if (d == -1) {
      inferred = int(i);
      continue;
    } else if (d < -1) {
      type_fail(op, "newshape " + ints_str(newshape) + " has " + std::to_string(d) + "; only 0 (copy) and -1 (infer) may be non-positive");
    }
    out[i] = d;
    // A product that wraps could match the input's count ([6, 7, 7905747460161236407] wraps to 6).
    if (__builtin_mul_overflow(known, d, &known))
      type_fail(op, "cannot reshape x " + shape_str(shape) + " to newshape " + ints_str(newshape) +
                        ": its element count overflows int64");
  }
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      type_fail(op, "cannot reshape x " + shape_str(shape) + " (" + std::to_string(total) + " elements) to newshape " +
                        ints_str(newshape) + ": " + std::to_string(total) + " is not a multiple of " + std::to_string(known));
    out[size_t(inferred)] = total / known;
  } else if (known != total) {
    type_fail(op, "cannot reshape x " + shape_str(shape) + " (" + std::to_string(total) + " elements) to " +
                      shape_str(out) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

std::string newshape_text(const std::vector<DimExpr>& newshape) {
  std::string listed;
  for (const DimExpr& d : newshape) listed += (listed.empty() ? "" : ", ") + dim_to_string(d);
  return "[" + clipped_text(listed) + "]";
}

std::vector<DimExpr> reshape_target(const std::vector<DimExpr>& dims, const std::vector<DimExpr>& newshape,
                                    const std::string& op) {
  auto static_sizes = [](const std::vector<DimExpr>& exprs) {
    std::vector<int64_t> sizes;
    for (const DimExpr& d : exprs)
      if (d.is_constant()) sizes.push_back(d.coefficient());
    return sizes;
  };
  std::vector<int64_t> shape = static_sizes(dims), sizes = static_sizes(newshape);
  if (shape.size() == dims.size() && sizes.size() == newshape.size())
    return constant_dims(reshape_target(shape, sizes, op));
  const std::string target = newshape_text(newshape);
  std::string x = "cannot reshape x " + clipped_text(dims_to_string(dims));
  DimExpr total = dim_product(dims), known(int64_t(1));
  std::vector<DimExpr> out(newshape.size());
  int inferred = -1;
  for (size_t i = 0; i < newshape.size(); ++i) {
    const DimExpr& d = newshape[i];
    if (d == DimExpr(int64_t(0))) {
      if (i >= dims.size())
        type_fail(op, "newshape " + target + " copies dimension " + std::to_string(i) + " (0) but x " +
                          clipped_text(dims_to_string(dims)) + " has rank " + std::to_string(dims.size()));
      out[i] = dims[i];
    } else if (d == DimExpr(int64_t(-1))) {
      inferred = int(i);
      continue;
    } else if (d.coefficient() < -1) {
      type_fail(op, "newshape " + target + " has " + dim_to_string(d) +
                        "; only 0 (copy) and -1 (infer) may be non-positive");
    } else {
      out[i] = d;
    }
    known = known * out[i];
  }
  if (inferred >= 0) {
    std::optional<DimExpr> quotient = exact_quotient(total, known);
    if (!quotient)
      type_fail(op, x + " (" + dim_to_string(total) + " elements) to newshape " + target + ": " +
                        dim_to_string(total) + " is not known to be a multiple of " + dim_to_string(known));
    out[size_t(inferred)] = *quotient;
  } else if (known != total) {
    type_fail(op, x + " (" + dim_to_string(total) + " elements) to " + clipped_text(dims_to_string(out)) + " (" +
                      dim_to_string(known) + " elements): the counts are not known to be equal");
  }
  return out;
}

std::vector<int64_t> transpose_permutation(int64_t rank, const AttrsNode& attrs, const std::string& op) {
  std::vector<int64_t> perm;
  const std::optional<std::vector<int64_t>> given = transpose_attrs(attrs).axes;
  if (!given) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    return perm;
  }
  const std::vector<int64_t>& axes = *given;
  if (int64_t(axes.size()) != rank)
    type_fail(op, "axes " + ints_str(axes) + " has " + std::to_string(axes.size()) + " entries but x has rank " +
                      std::to_string(rank));
  std::vector<bool> used(size_t(rank), false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, op, "axes entry");
    if (used[size_t(n)]) type_fail(op, "axes " + ints_str(axes) + " is not a permutation: dimension " + std::to_string(n) + " appears twice");
    used[size_t(n)] = true;
    perm.push_back(n);
  }
  return perm;
}

std::vector<int64_t> squeeze_shape(const std::vector<int64_t>& shape, const AttrsNode& attrs, const std::string& op) {
  std::vector<int64_t> out;
  const std::optional<std::vector<int64_t>> given = squeeze_attrs(attrs).axes;
  if (!given) {
    for (int64_t d : shape)
      if (d != 1) out.push_back(d);
    return out;
  }
  const std::vector<int64_t>& axes = *given;
  std::vector<bool> drop(shape.size(), false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, int64_t(shape.size()), op, "axis");
    if (drop[size_t(n)]) type_fail(op, "axis " + ints_str(axes) + " names dimension " + std::to_string(n) + " twice");
    if (shape[size_t(n)] != 1)
      type_fail(op, "cannot squeeze dimension " + std::to_string(n) + " of x " + shape_str(shape) + ": its size is " +
                        std::to_string(shape[size_t(n)]) + ", not 1");
    drop[size_t(n)] = true;
  }
  for (size_t i = 0; i < shape.size(); ++i)
    if (!drop[i]) out.push_back(shape[i]);
  return out;
}

namespace {

// Relay's index canonicalization: negative indices count from the end, then
// the index is clamped to the range a slice with this stride's sign may use.
int64_t canonical_index(int64_t index, int64_t extent, int64_t stride) {
  int64_t low = stride < 0 ? -1 : 0;
  int64_t high = stride < 0 ? extent - 1 : extent;
  if (index < 0) index = index < std::numeric_limits<int64_t>::min() + extent ? low : index + extent;
  return std::clamp(index, low, high);
}

}  // namespace

std::vector<SliceAxis> strided_slice_axes(const std::vector<int64_t>& shape, const AttrsNode& attrs,
                                          const std::string& op) {
  const StridedSliceAttrs slice = strided_slice_attrs(attrs);
  const std::vector<int64_t>& begin = slice.begin;
  const std::vector<int64_t>& end = slice.end;
  std::vector<int64_t> strides = slice.strides.value_or(std::vector<int64_t>{});
  bool size_mode = slice.slice_mode == SliceMode::kSize;
  int64_t rank = int64_t(shape.size());

  std::vector<SliceAxis> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = {0, 1, shape[i]};

  std::vector<int64_t> axes;
  if (!slice.axes) {
    if (int64_t(begin.size()) > rank)
      type_fail(op, "begin " + ints_str(begin) + " has " + std::to_string(begin.size()) + " entries but x " +
                        shape_str(shape) + " has rank " + std::to_string(rank));
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(int64_t(i));
  } else {
    std::vector<bool> named(shape.size(), false);
    for (int64_t a : *slice.axes) {
      int64_t n = normalize_axis(a, rank, op, "axes entry");
      if (named[size_t(n)]) type_fail(op, "axes " + ints_str(*slice.axes) + " names dimension " + std::to_string(n) + " twice");
      named[size_t(n)] = true;
      axes.push_back(n);
    }
  }

  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k];
    int64_t extent = shape[size_t(axis)];
    int64_t stride = size_mode || k >= strides.size() ? 1 : strides[k];
    int64_t b = canonical_index(begin[k], extent, stride);
    int64_t e;
    if (size_mode)
      e = end[k] < 0 || end[k] > extent - b ? extent : b + end[k];
    else
      e = canonical_index(end[k], extent, stride);
    if (stride > 0 ? e < b : e > b)
      type_fail(op, "dimension " + std::to_string(axis) + " (size " + std::to_string(extent) + "): begin " +
                        std::to_string(begin[k]) + " and end " + std::to_string(end[k]) + " run against stride " +
                        std::to_string(stride));
    int64_t distance = stride > 0 ? e - b : b - e;
    int64_t step = stride > 0 ? stride : -stride;
    out[size_t(axis)] = {b, stride, (distance + step - 1) / step};
  }
  return out;
}

std::vector<int64_t> split_sizes(int64_t extent, const AttrValue& indices_or_sections, const std::string& op) {
  std::vector<int64_t> sizes;
  if (auto* sections = std::get_if<int64_t>(&indices_or_sections)) {
    if (*sections <= 0 || extent % *sections != 0)
      type_fail(op, std::to_string(*sections) + " sections do not divide the split dimension of size " +
                        std::to_string(extent));
    // Every N divides 0: without this bound a 70-byte file asked for 10^8
    // empty pieces (1.8 GB, 25 s) or 10^12 (bad_alloc).
    if (extent == 0 && *sections > 1)
      type_fail(op, std::to_string(*sections) + " sections of an empty split dimension; it splits into 1 section");
    sizes.assign(size_t(*sections), extent / *sections);
    return sizes;
  }
  const auto& indices = std::get<std::vector<int64_t>>(indices_or_sections);
  int64_t start = 0;
  for (int64_t index : indices) {
    if (index <= start || index >= extent)
      type_fail(op, "indices " + ints_str(indices) + " must be ascending, positive and below the split dimension's size " +
                        std::to_string(extent));
    sizes.push_back(index - start);
    start = index;
  }
  sizes.push_back(extent - start);
  return sizes;
}

}  // namespace switchyard
