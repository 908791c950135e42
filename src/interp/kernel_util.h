// Helpers shared by the reference kernels: argument and attribute access,
// element loads and stores in each dtype's working type, and index maps for
// broadcasting and strided access. Plain and slow on purpose: the kernels are
// the oracle, so they favour being obviously right.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interp/value.h"
#include "ir/attrs.h"
#include "support/error.h"

namespace switchyard {

// Throws Error(kType, message): an argument or attribute does not fit.
[[noreturn]] void kernel_fail(const std::string& message);

// Argument `index` as a tensor / as the tensors of a tuple.
const NDArray& tensor_arg(const std::vector<Value>& args, size_t index);
std::vector<NDArray> tuple_arg(const std::vector<Value>& args, size_t index);

// An attribute an element-wise operator's scalar meaning names (clip's
// a_min, cast's dtype): the kernels read other attributes through their
// family's typed struct (op/*_attrs.h). An int where a float is expected is
// converted; a missing attribute fails with kernel_fail.
double float_attr(const AttrsNode& attrs, const std::string& name);
std::string string_attr(const AttrsNode& attrs, const std::string& name);

// Element i of a floating-point array, as float (float64 rounds: kernels
// that must keep its precision use load_double).
float load_float(const NDArray& a, int64_t i);
void store_float(NDArray& a, int64_t i, float v);  // rounds to float16/bfloat16
// Element i of an integer or bool array, as int64 (uint64: its bits).
int64_t load_int(const NDArray& a, int64_t i);
// Stores into an integer array wrapping to its width (two's complement, as
// NumPy); into bool as v != 0.
void store_int(NDArray& a, int64_t i, int64_t v);
// Element i of any dtype as double.
double load_double(const NDArray& a, int64_t i);
// Stores into any dtype. Into integers: truncated toward zero, saturated to
// the int64 range (NaN becomes 0), then wrapped to the width (uint64: as
// double_to_uint64); into bool: v != 0.
void store_double(NDArray& a, int64_t i, double v);
// Whether integer element i of `a` is greater than element j (uint64 by its bits).
bool int_greater(const NDArray& a, int64_t i, int64_t j);
// Truncates toward zero, saturating to the int64 range; NaN becomes 0.
int64_t double_to_int64(double v);
// To uint64: values from 2^63 convert exactly, saturating at 2^64 - 1;
// below, as double_to_int64, a negative value wrapping.
uint64_t double_to_uint64(double v);
// Copies one element between arrays of the same dtype, bit for bit.
void copy_element(const NDArray& src, int64_t src_index, NDArray& dst, int64_t dst_index);

// Wrapping int64 arithmetic (defined behaviour on overflow).
inline int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrap_sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

int64_t shape_numel(const std::vector<int64_t>& shape);
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);
// Normalizes a possibly negative axis into [0, rank); kernel_fail otherwise.
int64_t normalize_axis_for(int64_t axis, int64_t rank, const std::string& attr = "axis");
// NumPy broadcasting of two shapes; kernel_fail naming both on mismatch.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// For each element of `shape` in row-major order: base + sum(index[d] * strides[d]).
std::vector<int64_t> strided_offsets(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t base = 0);
// For each element of `out_shape` in row-major order, the element of an
// array of `in_shape` it reads under NumPy broadcasting.
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& in_shape);
// A new array of `shape` whose element j is src's element offsets[j].
NDArray gather_elements(const NDArray& src, std::vector<int64_t> shape, const std::vector<int64_t>& offsets);

// kernel_fail unless `a` has a floating-point dtype.
void expect_float_dtype(const NDArray& a, const std::string& role);
// kernel_fail unless `a` has an integer or floating-point dtype (not bool).
void expect_numeric_dtype(const NDArray& a, const std::string& role);
// kernel_fail unless both dtypes are equal.
void expect_equal_dtypes(const NDArray& a, const NDArray& b, const std::string& role_a, const std::string& role_b);

// "Tensor[(2, 3), float32]".
std::string array_type_string(const NDArray& a);

}  // namespace switchyard
