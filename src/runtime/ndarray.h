// A dense, row-major tensor value: dtype, shape and a shared, 64-byte aligned
// buffer. Used by the runtime for inputs/outputs and by the compiler for
// constants. Treated as immutable once shared.
//
// An imported weight's bytes may stay where they are, unaligned inside the
// mapped model file, until something asks for data(): most weights are
// only written to weights.bin, which reads them through bytes(), and a
// fresh aligned copy of ResNet-50's 100 MB costs more than the rest of the
// import (every page of it is a first touch).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/dtype.h"

namespace switchyard {

class NDArray {
 public:
  NDArray() = default;
  // A zero-filled array.
  NDArray(DType dtype, std::vector<int64_t> shape);

  // An array holding the `nbytes()` at `bytes` (any alignment), copied into
  // aligned storage, shared by every copy of the array, on the first call
  // of data(); `owner` keeps them alive until then.
  static NDArray deferred_copy(DType dtype, std::vector<int64_t> shape, const void* bytes,
                               std::shared_ptr<const void> owner);

  static NDArray scalar_f32(float v);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return int(shape_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * dtype_bytes(dtype_); }

  // The aligned buffer (making it, for a deferred copy).
  void* data() { return storage_ ? storage_->aligned(dtype_, shape_) : nullptr; }
  const void* data() const { return storage_ ? storage_->aligned(dtype_, shape_) : nullptr; }
  template <typename T>
  T* as() { return static_cast<T*>(data()); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data()); }
  // The bytes, at whatever alignment they are, for reading them whole
  // (writing, hashing, comparing) without making a deferred copy.
  const void* bytes() const { return storage_ ? storage_->bytes() : nullptr; }
  // Equal for arrays sharing storage (copies and reshapes of one another).
  const void* storage_identity() const { return storage_.get(); }

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
  class Storage {
   public:
    Storage(size_t bytes, DType dtype, const std::vector<int64_t>& shape);  // aligned and zeroed
    Storage(const void* deferred, size_t bytes, std::shared_ptr<const void> owner);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    // dtype and shape only name the array when it cannot be allocated.
    uint8_t* aligned(DType dtype, const std::vector<int64_t>& shape);
    const void* bytes() const;

   private:
    std::atomic<uint8_t*> aligned_{nullptr};
    const void* deferred_ = nullptr;
    size_t bytes_ = 0;
    // Kept after the copy: another thread's bytes() may still be reading
    // the deferred bytes it was handed.
    std::shared_ptr<const void> owner_;
    std::once_flag copied_;
  };
  std::shared_ptr<Storage> storage_;
};

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace switchyard
