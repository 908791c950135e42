// A oneDNN reorder (a layout conversion) whose scratchpad is the caller's,
// as every primitive's is in the runtime: left to oneDNN, a primitive that
// needs one keeps a single buffer, which every run executing it at once
// would write. The f32 reorders the runtime makes need none on the CPUs
// measured, but nothing in oneDNN promises that.
#pragma once

#include <cstddef>
#include <oneapi/dnnl/dnnl.hpp>

namespace switchyard {

class DnnlReorder {
 public:
  DnnlReorder() = default;  // empty; executing it is an error
  DnnlReorder(const dnnl::engine& engine, const dnnl::memory::desc& from, const dnnl::memory::desc& to);

  // Bytes of scratchpad one call needs (often 0).
  size_t scratchpad_bytes() const { return scratchpad_.get_size(); }
  // Converts `from` into `to` on the calling thread, using `scratchpad`
  // (scratchpad_bytes(), 64-byte aligned; may be null when that is 0).
  void execute(const dnnl::stream& stream, const dnnl::memory& from, const dnnl::memory& to, void* scratchpad) const;
  // The same outside a run (a load preparing weights): the scratchpad is
  // allocated for the call.
  void execute_with_own_scratchpad(const dnnl::stream& stream, const dnnl::memory& from, const dnnl::memory& to) const;

 private:
  dnnl::reorder reorder_;
  dnnl::memory::desc scratchpad_;
};

}  // namespace switchyard
