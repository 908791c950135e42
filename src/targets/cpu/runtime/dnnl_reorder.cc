#include "targets/cpu/runtime/dnnl_reorder.h"

#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "runtime/runtime_error.h"

namespace switchyard {

DnnlReorder::DnnlReorder(const dnnl::engine& engine, const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::reorder::primitive_desc description(engine, from, engine, to, attributes);
  scratchpad_ = description.scratchpad_desc();
  reorder_ = dnnl::reorder(description);
}

void DnnlReorder::execute(const dnnl::stream& stream, const dnnl::memory& from, const dnnl::memory& to,
                          void* scratchpad) const {
  std::unordered_map<int, dnnl::memory> arguments = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (scratchpad_bytes() > 0)
    arguments.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_, stream.get_engine(), scratchpad));
  reorder_.execute(stream, arguments);
}

void DnnlReorder::execute_with_own_scratchpad(const dnnl::stream& stream, const dnnl::memory& from,
                                              const dnnl::memory& to) const {
  constexpr size_t kAlignment = 64;
  const size_t bytes = (scratchpad_bytes() + kAlignment - 1) / kAlignment * kAlignment;
  std::unique_ptr<void, decltype(&std::free)> scratchpad(bytes ? std::aligned_alloc(kAlignment, bytes) : nullptr,
                                                         &std::free);
  if (bytes && !scratchpad)
    throw RuntimeError("out of memory for " + std::to_string(bytes) + " bytes of a reorder's scratchpad");
  execute(stream, from, to, scratchpad.get());
}

}  // namespace switchyard
