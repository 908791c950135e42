// NDArray storage and element access.
#include "runtime/ndarray.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "runtime/clipped_text.h"
#include "runtime/huge_pages.h"
#include "runtime/runtime_error.h"
#include "runtime/tensor_size.h"

namespace switchyard {

namespace {

// Buffers are zero up to the next 64 bytes, which vector loops may read.
size_t padded_to_line(size_t bytes) { return bytes == 0 ? 64 : (bytes + 63) / 64 * 64; }

// An aligned buffer of `bytes`, left uninitialised, on huge pages when large
// (weights, arenas). Out of memory is an error that names the array.
uint8_t* allocate_aligned(size_t bytes, DType dtype, const std::vector<int64_t>& shape) {
  void* p = allocate_maybe_on_huge_pages(bytes);
  if (!p)
    throw RuntimeError("cannot allocate a " + std::string(dtype_name(dtype)) + " array of shape " +
                       clipped_text(shape_to_string(shape)) + ": out of memory for its " +
                       byte_count_text(int64_t(bytes)));
  return static_cast<uint8_t*>(p);
}

// The array's size in bytes, refused before allocating: a size that wraps
// would allocate too little, and one beyond physical memory would not fail
// but exhaust the machine while the buffer is zeroed.
size_t checked_array_bytes(DType dtype, const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) throw std::invalid_argument("NDArray: negative dimension in " + clipped_text(shape_to_string(shape)));
  auto refuse = [&](const std::string& reason) {
    return RuntimeError("cannot allocate a " + std::string(dtype_name(dtype)) + " array of shape " +
                        clipped_text(shape_to_string(shape)) + ": " + reason);
  };
  std::optional<int64_t> checked = checked_nbytes(shape, dtype);
  if (!checked) throw refuse("its size in bytes overflows int64");
  if (*checked > physical_memory_bytes())
    throw refuse("it needs " + byte_count_text(*checked) + ", more than this machine's " +
                 byte_count_text(physical_memory_bytes()) + " of memory");
  return size_t(*checked);
}

}  // namespace

NDArray::Storage::Storage(size_t bytes, DType dtype, const std::vector<int64_t>& shape) : bytes_(bytes) {
  uint8_t* p = allocate_aligned(bytes, dtype, shape);
  std::memset(p, 0, padded_to_line(bytes));
  aligned_.store(p, std::memory_order_release);
}

NDArray::Storage::Storage(const void* deferred, size_t bytes, std::shared_ptr<const void> owner)
    : deferred_(deferred), bytes_(bytes), owner_(std::move(owner)) {}

NDArray::Storage::~Storage() { std::free(aligned_.load(std::memory_order_acquire)); }

uint8_t* NDArray::Storage::aligned(DType dtype, const std::vector<int64_t>& shape) {
  if (uint8_t* p = aligned_.load(std::memory_order_acquire)) return p;
  std::call_once(copied_, [&] {
    uint8_t* p = allocate_aligned(bytes_, dtype, shape);
    if (bytes_) std::memcpy(p, deferred_, bytes_);
    std::memset(p + bytes_, 0, padded_to_line(bytes_) - bytes_);
    aligned_.store(p, std::memory_order_release);
  });
  return aligned_.load(std::memory_order_acquire);
}

const void* NDArray::Storage::bytes() const {
  if (const uint8_t* p = aligned_.load(std::memory_order_acquire)) return p;
  return deferred_;
}

NDArray::NDArray(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype),
      shape_(std::move(shape)),
      storage_(std::make_shared<Storage>(checked_array_bytes(dtype_, shape_), dtype_, shape_)) {}

NDArray NDArray::deferred_copy(DType dtype, std::vector<int64_t> shape, const void* bytes,
                               std::shared_ptr<const void> owner) {
  NDArray out;
  out.dtype_ = dtype;
  out.storage_ = std::make_shared<Storage>(bytes, checked_array_bytes(dtype, shape), std::move(owner));
  out.shape_ = std::move(shape);
  return out;
}

NDArray NDArray::scalar_f32(float v) {
  NDArray a(DType::kFloat32, {});
  *a.as<float>() = v;
  return a;
}

int64_t NDArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

double NDArray::get_as_double(int64_t i) const {
  const uint8_t* p = as<uint8_t>();
  switch (dtype_) {
    case DType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DType::kFloat16: return half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return bfloat16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kInt8: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kInt64: return double(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kUInt8: return p[i];
    case DType::kBool: return p[i] ? 1.0 : 0.0;
    case DType::kFloat64: return reinterpret_cast<const double*>(p)[i];
    case DType::kInt16: return reinterpret_cast<const int16_t*>(p)[i];
    case DType::kUInt16: return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::kUInt32: return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::kUInt64: return double(reinterpret_cast<const uint64_t*>(p)[i]);
  }
  return 0;
}

void NDArray::set_from_double(int64_t i, double v) {
  uint8_t* p = as<uint8_t>();
  switch (dtype_) {
    case DType::kFloat32: reinterpret_cast<float*>(p)[i] = float(v); break;
    case DType::kFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_half(float(v)); break;
    case DType::kBFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_bfloat16(float(v)); break;
    case DType::kInt8: reinterpret_cast<int8_t*>(p)[i] = int8_t(v); break;
    case DType::kInt32: reinterpret_cast<int32_t*>(p)[i] = int32_t(v); break;
    case DType::kInt64: reinterpret_cast<int64_t*>(p)[i] = int64_t(v); break;
    case DType::kUInt8: p[i] = uint8_t(v); break;
    case DType::kBool: p[i] = v != 0; break;
    case DType::kFloat64: reinterpret_cast<double*>(p)[i] = v; break;
    case DType::kInt16: reinterpret_cast<int16_t*>(p)[i] = int16_t(v); break;
    // Unsigned through int64_t, so a negative value wraps (a direct
    // conversion of a negative double to an unsigned type is undefined).
    case DType::kUInt16: reinterpret_cast<uint16_t*>(p)[i] = uint16_t(int64_t(v)); break;
    case DType::kUInt32: reinterpret_cast<uint32_t*>(p)[i] = uint32_t(int64_t(v)); break;
    case DType::kUInt64:  // 2^64 and beyond saturate
      reinterpret_cast<uint64_t*>(p)[i] = v >= 18446744073709551615.0 ? UINT64_MAX
                                          : v >= 9223372036854775808.0 ? uint64_t(v)
                                                                       : uint64_t(int64_t(v));
      break;
  }
}

bool NDArray::bitwise_equal(const NDArray& o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  if (storage_ == o.storage_) return true;
  if (!storage_ || !o.storage_) return false;
  return std::memcmp(bytes(), o.bytes(), nbytes()) == 0;
}

NDArray NDArray::copy() const {
  NDArray out(dtype_, shape_);
  if (nbytes()) std::memcpy(out.data(), bytes(), nbytes());
  return out;
}

NDArray NDArray::reshaped(std::vector<int64_t> shape) const {
  if (checked_numel(shape) != numel()) throw std::invalid_argument("NDArray::reshaped: element count differs");
  NDArray out = *this;
  out.shape_ = std::move(shape);
  return out;
}

std::string NDArray::shape_string() const { return shape_to_string(shape_); }

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

}  // namespace switchyard
