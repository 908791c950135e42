// Intrusive reference counting for immutable IR objects.
//
// Why intrusive and not std::shared_ptr: a node is one allocation (smaller),
// and release can be made iterative, so dropping a 1,000,000-deep chain of
// nodes never recurses natively (ARCHITECTURE.md invariant 4).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace switchyard {

class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  void inc_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  // Drops one reference; deletes without native recursion on data depth.
  void dec_ref() const;
  int use_count() const { return ref_count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

// A counted pointer to an immutable T (T derives from Object).
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(const T* p) : ptr_(p) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(const Ref& o) : ptr_(o.ptr_) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(Ref&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  template <typename U>
  Ref(const Ref<U>& o) : ptr_(o.get()) {
    if (ptr_) ptr_->inc_ref();
  }
  ~Ref() {
    if (ptr_) ptr_->dec_ref();
  }
  Ref& operator=(Ref o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }

  const T* get() const { return ptr_; }
  const T* operator->() const { return ptr_; }
  const T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool defined() const { return ptr_ != nullptr; }
  bool same_as(const Ref& o) const { return ptr_ == o.ptr_; }
  bool operator==(const Ref& o) const { return ptr_ == o.ptr_; }
  bool operator!=(const Ref& o) const { return ptr_ != o.ptr_; }

 private:
  const T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

struct RefHash {
  template <typename T>
  size_t operator()(const Ref<T>& r) const {
    return std::hash<const void*>()(r.get());
  }
};

}  // namespace switchyard
