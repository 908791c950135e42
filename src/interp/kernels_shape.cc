// Reference kernels of the injective operators, Relay's semantics: reshape
// (0 copies a dimension, -1 infers one), transpose, expand_dims, squeeze,
// concatenate, split, strided_slice (negative indices and strides, axes,
// slice_mode "end"/"size"), take (clip/wrap/fast) and broadcast_to. Every
// result is a fresh array; elements are copied bit for bit.
#include <cstring>

#include "interp/kernel_groups.h"
#include "interp/kernel_registry.h"
#include "interp/kernel_util.h"
#include "op/handles.h"
#include "op/movement_attrs.h"

namespace switchyard {

namespace {

std::vector<NDArray> reshape_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  const ReshapeAttrs given = reshape_attrs(attrs);
  // specialize_for_inputs states every symbolic target before a run.
  if (!given.symbolic.empty())
    kernel_fail("newshape " + dims_to_string(given.symbolic) + " is symbolic: the module was not specialised");
  const std::vector<int64_t>& newshape = given.newshape;
  std::vector<int64_t> shape;
  int64_t inferred = -1;
  for (size_t i = 0; i < newshape.size(); ++i) {
    int64_t d = newshape[i];
    if (d == 0) {
      if (i >= x.shape().size()) kernel_fail("newshape entry 0 at position " + std::to_string(i) + " has no input dimension to copy");
      shape.push_back(x.shape()[i]);
    } else if (d == -1) {
      if (inferred >= 0) kernel_fail("newshape may contain -1 only once");
      inferred = int64_t(i);
      shape.push_back(1);
    } else if (d < 0) {
      kernel_fail("newshape entry " + std::to_string(d) + " is not supported (only 0 and -1 are special)");
    } else {
      shape.push_back(d);
    }
  }
  int64_t known = shape_numel(shape);
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0)
      kernel_fail("cannot infer the -1 of newshape for " + x.shape_string());
    shape[size_t(inferred)] = x.numel() / known;
  }
  if (shape_numel(shape) != x.numel())
    kernel_fail("cannot reshape " + x.shape_string() + " (" + std::to_string(x.numel()) + " elements) to " +
                shape_to_string(shape));
  return {x.copy().reshaped(shape)};
}

std::vector<NDArray> transpose_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  int64_t rank = x.ndim();
  std::vector<int64_t> axes;
  if (const std::optional<std::vector<int64_t>> given = transpose_attrs(attrs).axes) {
    if (int64_t(given->size()) != rank)
      kernel_fail("axes has " + std::to_string(given->size()) + " entries for rank " + std::to_string(rank));
    std::vector<bool> used(size_t(rank), false);
    for (int64_t a : *given) {
      int64_t n = normalize_axis_for(a, rank, "axes");
      if (used[size_t(n)]) kernel_fail("axes is not a permutation");
      used[size_t(n)] = true;
      axes.push_back(n);
    }
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) axes.push_back(d);
  }
  std::vector<int64_t> in_strides = row_major_strides(x.shape());
  std::vector<int64_t> shape, strides;
  for (int64_t a : axes) {
    shape.push_back(x.shape()[size_t(a)]);
    strides.push_back(in_strides[size_t(a)]);
  }
  return {gather_elements(x, shape, strided_offsets(shape, strides))};
}

std::vector<NDArray> expand_dims_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  const ExpandDimsAttrs expand = expand_dims_attrs(attrs);
  int64_t axis = normalize_axis_for(expand.axis, x.ndim() + 1);
  int64_t count = expand.num_newaxis;
  if (count < 0) kernel_fail("num_newaxis must not be negative");
  std::vector<int64_t> shape = x.shape();
  shape.insert(shape.begin() + axis, size_t(count), 1);
  return {x.copy().reshaped(shape)};
}

std::vector<NDArray> squeeze_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  std::vector<bool> drop(size_t(x.ndim()), false);
  if (const std::optional<std::vector<int64_t>> axes = squeeze_attrs(attrs).axes) {
    for (int64_t a : *axes) {
      int64_t n = normalize_axis_for(a, x.ndim());
      if (x.shape()[size_t(n)] != 1)
        kernel_fail("cannot squeeze axis " + std::to_string(a) + " of " + x.shape_string() + ": its size is not 1");
      drop[size_t(n)] = true;
    }
  } else {
    for (size_t d = 0; d < drop.size(); ++d) drop[d] = x.shape()[d] == 1;
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < drop.size(); ++d)
    if (!drop[d]) shape.push_back(x.shape()[d]);
  return {x.copy().reshaped(shape)};
}

// The elements [start, start + length) of `axis`.
NDArray slice_axis(const NDArray& x, int64_t axis, int64_t start, int64_t length) {
  std::vector<int64_t> shape = x.shape();
  shape[size_t(axis)] = length;
  std::vector<int64_t> strides = row_major_strides(x.shape());
  return gather_elements(x, shape, strided_offsets(shape, strides, start * strides[size_t(axis)]));
}

std::vector<NDArray> concatenate_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  std::vector<NDArray> parts = tuple_arg(args, 0);
  if (parts.empty()) kernel_fail("concatenate needs at least one tensor");
  const NDArray& first = parts[0];
  if (first.ndim() == 0) kernel_fail("cannot concatenate 0-d tensors");
  int64_t axis = normalize_axis_for(concatenate_attrs(attrs).axis, first.ndim());
  std::vector<int64_t> shape = first.shape();
  shape[size_t(axis)] = 0;
  for (const NDArray& p : parts) {
    expect_equal_dtypes(first, p, "field 0", "every field");
    bool fits = p.ndim() == first.ndim();
    for (int64_t d = 0; fits && d < p.ndim(); ++d)
      fits = d == axis || p.shape()[size_t(d)] == first.shape()[size_t(d)];
    if (!fits)
      kernel_fail("cannot concatenate " + first.shape_string() + " and " + p.shape_string() + " along axis " +
                  std::to_string(axis));
    shape[size_t(axis)] += p.shape()[size_t(axis)];
  }
  NDArray out(first.dtype(), shape);
  int64_t outer = shape_numel(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
  int64_t inner = shape_numel(std::vector<int64_t>(shape.begin() + axis + 1, shape.end()));
  size_t element = size_t(dtype_bytes(first.dtype()));
  auto* dst = static_cast<uint8_t*>(out.data());
  // Row by row, each part contributes a contiguous block of its axis x inner elements.
  for (int64_t o = 0; o < outer; ++o)
    for (const NDArray& p : parts) {
      size_t block = size_t(p.shape()[size_t(axis)] * inner) * element;
      std::memcpy(dst, static_cast<const uint8_t*>(p.data()) + size_t(o) * block, block);
      dst += block;
    }
  return {out};
}

std::vector<NDArray> split_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  const SplitAttrs split = split_attrs(attrs);
  int64_t axis = normalize_axis_for(split.axis, x.ndim());
  int64_t dim = x.shape()[size_t(axis)];
  std::vector<int64_t> bounds;  // the start of each part
  if (const int64_t* sections = std::get_if<int64_t>(&split.indices_or_sections)) {
    if (*sections <= 0 || dim % *sections != 0)
      kernel_fail("cannot split a dimension of " + std::to_string(dim) + " into " + std::to_string(*sections) +
                  " equal sections");
    for (int64_t s = 0; s < *sections; ++s) bounds.push_back(s * (dim / *sections));
  } else {
    bounds.push_back(0);
    for (int64_t index : std::get<std::vector<int64_t>>(split.indices_or_sections)) {
      if (index < 0) kernel_fail("split indices must not be negative");
      bounds.push_back(std::min(index, dim));
    }
  }
  std::vector<NDArray> parts;
  for (size_t i = 0; i < bounds.size(); ++i) {
    // As NumPy: a part whose end lies before its start is empty.
    int64_t end = i + 1 < bounds.size() ? bounds[i + 1] : dim;
    parts.push_back(slice_axis(x, axis, bounds[i], std::max<int64_t>(end - bounds[i], 0)));
  }
  return parts;
}

// TVM's canonicalization: a negative index counts from the end, then the
// index is clamped to [0, extent] (stride > 0) or [-1, extent - 1] (stride < 0).
int64_t canonical_index(int64_t index, int64_t extent, int64_t stride) {
  if (index < 0) index += extent;
  int64_t low = stride < 0 ? -1 : 0, high = stride < 0 ? extent - 1 : extent;
  return std::min(std::max(index, low), high);
}

std::vector<NDArray> strided_slice_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  int64_t rank = x.ndim();
  const StridedSliceAttrs slice = strided_slice_attrs(attrs);
  // specialize_for_inputs states every symbolic end before a run.
  if (!slice.symbolic_end.empty())
    kernel_fail("end " + dims_to_string(slice.symbolic_end) + " is symbolic: the module was not specialised");
  const std::vector<int64_t>& begin = slice.begin;
  const std::vector<int64_t>& end = slice.end;
  std::vector<int64_t> steps = slice.strides.value_or(std::vector<int64_t>{});
  bool size_mode = slice.slice_mode == SliceMode::kSize;
  std::vector<int64_t> axes;
  if (const std::optional<std::vector<int64_t>>& given = slice.axes) {
    for (int64_t a : *given) axes.push_back(normalize_axis_for(a, rank, "axes"));
    if (begin.size() != axes.size() || end.size() != axes.size())
      kernel_fail("begin and end must have one entry per axis in axes");
  } else {
    if (int64_t(begin.size()) > rank || int64_t(end.size()) > rank)
      kernel_fail("begin and end have more entries than the rank " + std::to_string(rank));
    for (int64_t a = 0; a < int64_t(std::max(begin.size(), end.size())); ++a) axes.push_back(a);
  }
  std::vector<int64_t> in_strides = row_major_strides(x.shape());
  std::vector<int64_t> shape = x.shape(), strides = in_strides;
  int64_t base = 0;
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t axis = axes[j], extent = x.shape()[size_t(axis)];
    int64_t step = size_mode ? 1 : (j < steps.size() ? steps[j] : 1);
    if (step == 0) kernel_fail("strides must not be 0");
    // Missing begin/end (shorter lists) take the whole axis in the step's direction.
    int64_t first = canonical_index(j < begin.size() ? begin[j] : (step > 0 ? 0 : extent - 1), extent, step);
    int64_t last;
    if (size_mode) {
      int64_t size = j < end.size() ? end[j] : -1;
      last = size < 0 ? extent : std::min(first + size, extent);
    } else {
      last = j < end.size() ? canonical_index(end[j], extent, step) : (step > 0 ? extent : -1);
    }
    int64_t length = step > 0 ? (last - first + step - 1) / step : (first - last + (-step) - 1) / (-step);
    shape[size_t(axis)] = std::max<int64_t>(length, 0);
    strides[size_t(axis)] = in_strides[size_t(axis)] * step;
    base += first * in_strides[size_t(axis)];
  }
  return {gather_elements(x, shape, strided_offsets(shape, strides, base))};
}

std::vector<NDArray> take_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  NDArray data = tensor_arg(args, 0);
  const NDArray& indices = tensor_arg(args, 1);
  if (!dtype_is_int(indices.dtype()))
    kernel_fail("indices must have an integer dtype, got " + std::string(dtype_name(indices.dtype())));
  const TakeAttrs take = take_attrs(attrs);
  int64_t axis = 0;
  if (const std::optional<int64_t>& given = take.axis) {
    axis = normalize_axis_for(*given, data.ndim());
  } else {
    data = data.reshaped({data.numel()});
  }
  const std::vector<int64_t>& ds = data.shape();
  int64_t extent = ds[size_t(axis)];
  int64_t outer = shape_numel(std::vector<int64_t>(ds.begin(), ds.begin() + axis));
  int64_t inner = shape_numel(std::vector<int64_t>(ds.begin() + axis + 1, ds.end()));
  std::vector<int64_t> shape(ds.begin(), ds.begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), ds.begin() + axis + 1, ds.end());
  if (extent == 0 && indices.numel() > 0)
    throw Error(ErrorKind::kRuntime, "take from an axis of size 0");
  NDArray out(data.dtype(), shape);
  int64_t out_index = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < indices.numel(); ++j) {
      int64_t index = load_int(indices, j);
      if (take.mode == TakeMode::kClip) {
        index = std::min(std::max<int64_t>(index, 0), extent - 1);
      } else if (take.mode == TakeMode::kWrap) {
        index = (index % extent + extent) % extent;
      } else if (index < 0 || index >= extent) {
        throw Error(ErrorKind::kRuntime, "take index " + std::to_string(index) + " is out of range for an axis of " +
                                             std::to_string(extent) + " (mode \"fast\" does not clip)");
      }
      for (int64_t i = 0; i < inner; ++i) copy_element(data, (o * extent + index) * inner + i, out, out_index++);
    }
  return {out};
}

std::vector<NDArray> broadcast_to_kernel(const std::vector<Value>& args, const AttrsNode& attrs) {
  const NDArray& x = tensor_arg(args, 0);
  const BroadcastToAttrs given = broadcast_to_attrs(attrs);
  if (!given.symbolic.empty())
    kernel_fail("shape " + dims_to_string(given.symbolic) + " is symbolic: the module was not specialised");
  const std::vector<int64_t>& shape = given.shape;
  for (int64_t d : shape)
    if (d < 0) kernel_fail("shape must not contain negative sizes");
  return {gather_elements(x, shape, broadcast_offsets(shape, x.shape()))};
}

}  // namespace

void register_shape_kernels() {
  register_interp_kernel(ops::reshape(), {reshape_kernel});
  register_interp_kernel(ops::transpose(), {transpose_kernel});
  register_interp_kernel(ops::expand_dims(), {expand_dims_kernel});
  register_interp_kernel(ops::squeeze(), {squeeze_kernel});
  register_interp_kernel(ops::concatenate(), {concatenate_kernel});
  register_interp_kernel(ops::split(), {split_kernel, /*returns_tuple=*/true});
  register_interp_kernel(ops::strided_slice(), {strided_slice_kernel});
  register_interp_kernel(ops::take(), {take_kernel});
  register_interp_kernel(ops::broadcast_to(), {broadcast_to_kernel});
}

}  // namespace switchyard
