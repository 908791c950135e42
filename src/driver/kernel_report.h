// How each kernel of an artifact runs, read from its manifest: a library
// primitive (which one) or loops the compiler generated. `inspect` lists
// it per kernel and `run --profile` beside each kernel's time, so a slow
// kernel can be told apart from a slow library call.
#pragma once

#include <string>
#include <vector>

#include "runtime/manifest.h"

namespace switchyard {

struct KernelExecution {
  bool library = false;     // a library primitive runs it (oneDNN, the runtime's own, cuBLASLt, cuDNN)
  std::string description;  // "oneDNN convolution", "Winograd convolution (runtime)", "generated loops", ...
  // For generated loops: the convolutions, pools and products among its
  // operators, which no library took (a window or product loop).
  std::vector<std::string> window_or_product_ops;
  // oneDNN's name for the implementation it picks for the primitive on this
  // machine ("brgconv:avx512_core", "ref:any"), once asked; empty otherwise.
  std::string implementation;
};

KernelExecution kernel_execution(const Manifest& manifest, const ManifestKernel& kernel);

// Asks this machine's oneDNN which implementation runs each oneDNN
// primitive of `executions` (one per manifest kernel), making each distinct
// primitive once (as a load does, with one thread): a reference
// implementation ("ref:", "simple_") is oneDNN's slow fallback.
void add_onednn_implementations(const Manifest& manifest, std::vector<KernelExecution>& executions);
bool is_reference_implementation(const std::string& implementation);

// "library: oneDNN convolution [jit:avx512_core]" or "loops: generated window loop (nn.conv2d ...)".
std::string kernel_execution_text(const KernelExecution& execution);

}  // namespace switchyard
