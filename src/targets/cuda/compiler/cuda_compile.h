// Compiles CUDA C++ (targets/cuda/compiler/cuda_render.h's units) to a cubin for one GPU
// architecture, in-process with NVRTC. NVRTC exists when the build found a
// CUDA toolkit (SY_CUDA); without one every call is a clear error, so the
// rest of the compiler builds and runs the same either way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/virtual_device.h"

namespace switchyard {

// Whether this build links NVRTC (was configured with a CUDA toolkit).
bool cuda_toolkit_available();

// The GPU architecture a cuda target compiles for: its -arch option
// ("cuda -arch=sm_90"), sm_90 when it has none. Throws Error(kUsage) for
// one that is not sm_<digits>.
std::string cuda_arch(const Target* target);
// The compute capability an architecture needs, as major * 10 + minor (sm_90: 90).
int cuda_compute_capability(const std::string& arch);

struct Cubin {
  std::string arch;            // "sm_90"
  std::vector<uint8_t> image;  // the ELF image cuModuleLoadData takes
  std::string log;             // NVRTC's warnings, if any
};

// Compiles `code` (named `name` in messages) for `arch`. Throws
// Error(kBackend) with NVRTC's log when it does not compile, and when this
// build has no CUDA toolkit.
Cubin compile_cuda(const std::string& code, const std::string& name, const std::string& arch);

// compile_cuda through the kernel cache: the cubin is kept under
// `cache_dir`/cubins, keyed by the code, the architecture and NVRTC's
// version, and each entry is hash-checked before use
// (toolchain/verified_cache.h). `cached` says whether it came from there.
Cubin compile_cuda_cached(const std::string& code, const std::string& name, const std::string& arch,
                          const std::string& cache_dir, bool* cached);

}  // namespace switchyard
