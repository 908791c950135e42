// Native recursion bounded by the stack it uses, not only by a count. The
// parser's nesting and the interpreter's calls recurse; their frames are
// several times larger under AddressSanitizer, where 800 levels under a
// 1,000-level count overflowed the 8 MiB stack.
#pragma once

#include <cstddef>
#include <cstdint>

namespace switchyard {

// The stack used since construction (stacks grow down on every target).
class StackBudget {
 public:
  // A quarter of the default 8 MiB main-thread stack, leaving the caller
  // room for whatever it does with the error.
  static constexpr size_t kBytes = size_t(2) << 20;

  StackBudget() : base_(here()) {}
  bool exhausted() const {
    uintptr_t now = here();
    return now < base_ && base_ - now > kBytes;
  }

 private:
  [[gnu::noinline]] static uintptr_t here() { return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)); }

  uintptr_t base_;
};

}  // namespace switchyard
