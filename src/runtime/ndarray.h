// A dense, row-major tensor value: dtype, shape and a shared, 64-byte aligned
// buffer. Used by the runtime for inputs/outputs and by the compiler for
// constants. Treated as immutable once shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/dtype.h"

namespace switchyard {

class NDArray {
 public:
  NDArray() = default;
  // A zero-filled array.
  NDArray(DType dtype, std::vector<int64_t> shape);

  static NDArray scalar_f32(float v);

  bool defined() const { return data_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return int(shape_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * dtype_bytes(dtype_); }

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data_.get()); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data_.get()); }

  // Element i read/written as double (any dtype; half types converted).
  double get_as_double(int64_t i) const;
  void set_from_double(int64_t i, double v);

  // Same bytes, same shape, same dtype.
  bool bitwise_equal(const NDArray& other) const;
  // A deep copy that owns fresh storage.
  NDArray copy() const;
  // Shares storage with a new shape of the same element count.
  NDArray reshaped(std::vector<int64_t> shape) const;

  std::string shape_string() const;  // "(2, 3)"

 private:
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  std::shared_ptr<uint8_t> data_;
};

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace switchyard
