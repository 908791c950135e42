// NDArray storage and element access.
#include "runtime/ndarray.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "runtime/clipped_text.h"
#include "runtime/runtime_error.h"
#include "runtime/tensor_size.h"

namespace switchyard {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}  // namespace

NDArray::NDArray(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_)
    if (d < 0) throw std::invalid_argument("NDArray: negative dimension in " + clipped_text(shape_string()));
  auto refuse = [&](const std::string& reason) {
    return RuntimeError("cannot allocate a " + std::string(dtype_name(dtype_)) + " array of shape " +
                        clipped_text(shape_string()) + ": " + reason);
  };
  // Refused before allocating: a size that wraps would allocate too little,
  // and one beyond physical memory would not fail but exhaust the machine
  // while the buffer is zeroed.
  std::optional<int64_t> checked = checked_nbytes(shape_, dtype_);
  if (!checked) throw refuse("its size in bytes overflows int64");
  if (*checked > physical_memory_bytes())
    throw refuse("it needs " + byte_count_text(*checked) + ", more than this machine's " +
                 byte_count_text(physical_memory_bytes()) + " of memory");
  size_t bytes = size_t(*checked);
  // Large buffers (weights, arenas) go on 2 MiB pages where the kernel
  // allows it: first touch then costs one fault per 2 MiB instead of one per
  // 4 KiB, which dominates loading a model's weights.
  size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  size_t alloc = (bytes + alignment - 1) / alignment * alignment;
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(alignment, alloc);
  if (!p) throw refuse("out of memory for its " + byte_count_text(*checked));
  if (alignment == kHugePage) madvise(p, alloc, MADV_HUGEPAGE);
  std::memset(p, 0, alloc);
  data_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
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
  const uint8_t* p = data_.get();
  switch (dtype_) {
    case DType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DType::kFloat16: return half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return bfloat16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kInt8: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kInt64: return double(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kUInt8: return p[i];
    case DType::kBool: return p[i] ? 1.0 : 0.0;
  }
  return 0;
}

void NDArray::set_from_double(int64_t i, double v) {
  uint8_t* p = data_.get();
  switch (dtype_) {
    case DType::kFloat32: reinterpret_cast<float*>(p)[i] = float(v); break;
    case DType::kFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_half(float(v)); break;
    case DType::kBFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_bfloat16(float(v)); break;
    case DType::kInt8: reinterpret_cast<int8_t*>(p)[i] = int8_t(v); break;
    case DType::kInt32: reinterpret_cast<int32_t*>(p)[i] = int32_t(v); break;
    case DType::kInt64: reinterpret_cast<int64_t*>(p)[i] = int64_t(v); break;
    case DType::kUInt8: p[i] = uint8_t(v); break;
    case DType::kBool: p[i] = v != 0; break;
  }
}

bool NDArray::bitwise_equal(const NDArray& o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  if (data_ == o.data_) return true;
  if (!data_ || !o.data_) return false;
  return std::memcmp(data_.get(), o.data_.get(), nbytes()) == 0;
}

NDArray NDArray::copy() const {
  NDArray out(dtype_, shape_);
  if (nbytes()) std::memcpy(out.data(), data(), nbytes());
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
