// A oneDNN float32 blocked memory layout as one line of text and back: how
// the manifest records the layout of weights prepared at compile time and
// stored in weights.bin, so the runtime can check that its primitive wants
// exactly that layout before adopting them.
#pragma once

#include <cstdint>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

namespace switchyard {

// "1,2,3": `count` values joined by commas.
std::string joined(const int64_t* values, int count);

// "onednn dims=... padded=... offsets=... offset0=0 strides=... blocks=1:8,0:8",
// or empty for a layout it does not describe (compensated or non-blocked formats).
std::string layout_text(const dnnl::memory::desc& desc);

// The layout layout_text wrote; throws RuntimeError for any other text.
dnnl::memory::desc layout_from_text(const std::string& text);

}  // namespace switchyard
