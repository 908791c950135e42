// Argument, attribute, element and index helpers of the reference kernels.
#include "interp/kernel_util.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/clipped_text.h"

namespace switchyard {

void kernel_fail(const std::string& message) { throw Error(ErrorKind::kType, message); }

const NDArray& tensor_arg(const std::vector<Value>& args, size_t index) {
  if (index >= args.size())
    kernel_fail("expects at least " + std::to_string(index + 1) + " arguments, got " + std::to_string(args.size()));
  const Value& v = args[index];
  if (!v.is_tensor()) kernel_fail("argument " + std::to_string(index) + " must be a tensor, got " + value_summary(v));
  if (!v.tensor.defined()) kernel_fail("argument " + std::to_string(index) + " is an undefined tensor");
  return v.tensor;
}

std::vector<NDArray> tuple_arg(const std::vector<Value>& args, size_t index) {
  if (index >= args.size())
    kernel_fail("expects at least " + std::to_string(index + 1) + " arguments, got " + std::to_string(args.size()));
  const Value& v = args[index];
  if (!v.is_tuple()) kernel_fail("argument " + std::to_string(index) + " must be a tuple, got " + value_summary(v));
  std::vector<NDArray> out;
  for (const Value& f : v.fields) {
    if (!f.is_tensor()) kernel_fail("argument " + std::to_string(index) + " must be a tuple of tensors");
    out.push_back(f.tensor);
  }
  return out;
}

namespace {

const AttrValue& require_attr(const AttrsNode& attrs, const std::string& name) {
  const AttrValue* v = attrs.find(name);
  if (!v) kernel_fail("missing attribute '" + name + "'");
  return *v;
}

[[noreturn]] void attr_kind_fail(const std::string& name, const char* expected, const AttrValue& v) {
  kernel_fail("attribute '" + name + "' must be " + expected + ", got " + clipped_text(attr_value_to_string(v)));
}

}  // namespace

// A plain cast is undefined behaviour out of range, hence the checks.
int64_t double_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

uint64_t double_to_uint64(double v) {
  if (v >= 18446744073709551615.0) return std::numeric_limits<uint64_t>::max();
  if (v >= 9223372036854775808.0) return uint64_t(v);
  return uint64_t(double_to_int64(v));  // a negative value wraps
}

double float_attr(const AttrsNode& attrs, const std::string& name) {
  const AttrValue& v = require_attr(attrs, name);
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
  attr_kind_fail(name, "a number", v);
}

std::string string_attr(const AttrsNode& attrs, const std::string& name) {
  const AttrValue& v = require_attr(attrs, name);
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  attr_kind_fail(name, "a string", v);
}

float load_float(const NDArray& a, int64_t i) {
  switch (a.dtype()) {
    case DType::kFloat32: return a.as<float>()[i];
    case DType::kFloat16: return half_to_float(a.as<uint16_t>()[i]);
    case DType::kBFloat16: return bfloat16_to_float(a.as<uint16_t>()[i]);
    case DType::kFloat64: return float(a.as<double>()[i]);
    default: return float(load_double(a, i));
  }
}

void store_float(NDArray& a, int64_t i, float v) {
  switch (a.dtype()) {
    case DType::kFloat32: a.as<float>()[i] = v; return;
    case DType::kFloat16: a.as<uint16_t>()[i] = float_to_half(v); return;
    case DType::kBFloat16: a.as<uint16_t>()[i] = float_to_bfloat16(v); return;
    case DType::kFloat64: a.as<double>()[i] = v; return;
    default: store_double(a, i, v); return;
  }
}

int64_t load_int(const NDArray& a, int64_t i) {
  switch (a.dtype()) {
    case DType::kInt8: return a.as<int8_t>()[i];
    case DType::kInt16: return a.as<int16_t>()[i];
    case DType::kInt32: return a.as<int32_t>()[i];
    case DType::kInt64: return a.as<int64_t>()[i];
    case DType::kUInt8: return a.as<uint8_t>()[i];
    case DType::kUInt16: return a.as<uint16_t>()[i];
    case DType::kUInt32: return a.as<uint32_t>()[i];
    case DType::kUInt64: return int64_t(a.as<uint64_t>()[i]);
    case DType::kBool: return a.as<uint8_t>()[i] != 0;
    case DType::kFloat32: case DType::kFloat16: case DType::kBFloat16: case DType::kFloat64: break;
  }
  return double_to_int64(load_double(a, i));
}

void store_int(NDArray& a, int64_t i, int64_t v) {
  switch (a.dtype()) {
    case DType::kInt8: a.as<int8_t>()[i] = int8_t(uint8_t(uint64_t(v))); return;
    case DType::kInt16: a.as<int16_t>()[i] = int16_t(uint16_t(uint64_t(v))); return;
    case DType::kInt32: a.as<int32_t>()[i] = int32_t(uint32_t(uint64_t(v))); return;
    case DType::kInt64: a.as<int64_t>()[i] = v; return;
    case DType::kUInt8: a.as<uint8_t>()[i] = uint8_t(uint64_t(v)); return;
    case DType::kUInt16: a.as<uint16_t>()[i] = uint16_t(uint64_t(v)); return;
    case DType::kUInt32: a.as<uint32_t>()[i] = uint32_t(uint64_t(v)); return;
    case DType::kUInt64: a.as<uint64_t>()[i] = uint64_t(v); return;
    case DType::kBool: a.as<uint8_t>()[i] = v != 0; return;
    case DType::kFloat64: a.as<double>()[i] = double(v); return;
    case DType::kFloat32: case DType::kFloat16: case DType::kBFloat16: break;
  }
  store_float(a, i, float(v));  // rounds once, from int64
}

double load_double(const NDArray& a, int64_t i) {
  if (a.dtype() == DType::kFloat64) return a.as<double>()[i];
  if (dtype_is_float(a.dtype())) return load_float(a, i);
  if (a.dtype() == DType::kUInt64) return double(a.as<uint64_t>()[i]);
  return double(load_int(a, i));
}

void store_double(NDArray& a, int64_t i, double v) {
  if (a.dtype() == DType::kFloat64) {
    a.as<double>()[i] = v;
    return;
  }
  if (dtype_is_float(a.dtype())) return store_float(a, i, float(v));
  if (a.dtype() == DType::kBool) return store_int(a, i, v != 0);
  if (a.dtype() == DType::kUInt64) return store_int(a, i, int64_t(double_to_uint64(v)));
  store_int(a, i, double_to_int64(v));
}

bool int_greater(const NDArray& a, int64_t i, int64_t j) {
  if (a.dtype() == DType::kUInt64) return a.as<uint64_t>()[i] > a.as<uint64_t>()[j];
  return load_int(a, i) > load_int(a, j);
}

void copy_element(const NDArray& src, int64_t src_index, NDArray& dst, int64_t dst_index) {
  size_t bytes = size_t(dtype_bytes(src.dtype()));
  std::memcpy(static_cast<uint8_t*>(dst.data()) + size_t(dst_index) * bytes,
              static_cast<const uint8_t*>(src.data()) + size_t(src_index) * bytes, bytes);
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t normalize_axis_for(int64_t axis, int64_t rank, const std::string& attr) {
  if (axis < -rank || axis >= rank)
    kernel_fail("'" + attr + "' " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      kernel_fail("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strided_offsets(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t base) {
  int64_t total = shape_numel(shape);
  std::vector<int64_t> offsets(size_t(std::max<int64_t>(total, 0)));
  if (total <= 0) return offsets;
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = base;
  // An odometer over the output index, updating the offset incrementally.
  for (int64_t flat = 0; flat < total; ++flat) {
    offsets[size_t(flat)] = offset;
    for (size_t d = shape.size(); d-- > 0;) {
      ++index[d];
      offset += strides[d];
      if (index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return offsets;
}

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& in_shape) {
  if (in_shape.size() > out_shape.size())
    kernel_fail("cannot broadcast " + shape_to_string(in_shape) + " to " + shape_to_string(out_shape));
  size_t lead = out_shape.size() - in_shape.size();
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  for (size_t d = 0; d < in_shape.size(); ++d) {
    int64_t in_dim = in_shape[d], out_dim = out_shape[lead + d];
    if (in_dim != out_dim && in_dim != 1)
      kernel_fail("cannot broadcast " + shape_to_string(in_shape) + " to " + shape_to_string(out_shape));
    strides[lead + d] = in_dim == 1 ? 0 : in_strides[d];
  }
  return strided_offsets(out_shape, strides);
}

NDArray gather_elements(const NDArray& src, std::vector<int64_t> shape, const std::vector<int64_t>& offsets) {
  NDArray out(src.dtype(), std::move(shape));
  for (size_t j = 0; j < offsets.size(); ++j) copy_element(src, offsets[j], out, int64_t(j));
  return out;
}

void expect_float_dtype(const NDArray& a, const std::string& role) {
  if (!dtype_is_float(a.dtype()))
    kernel_fail(role + " must have a floating-point dtype, got " + dtype_name(a.dtype()));
}

void expect_numeric_dtype(const NDArray& a, const std::string& role) {
  if (a.dtype() == DType::kBool) kernel_fail(role + " must be numeric, got bool");
}

void expect_equal_dtypes(const NDArray& a, const NDArray& b, const std::string& role_a, const std::string& role_b) {
  if (a.dtype() != b.dtype())
    kernel_fail(role_a + " and " + role_b + " must have the same dtype, got " + dtype_name(a.dtype()) + " and " +
                dtype_name(b.dtype()));
}

std::string array_type_string(const NDArray& a) {
  return std::string("Tensor[") + a.shape_string() + ", " + dtype_name(a.dtype()) + "]";
}

}  // namespace switchyard
