// The CUDA renderer of the kernel IR: prints a kernel as one CUDA C++
// translation unit (for NVRTC, targets/cuda/compiler/cuda_compile.h) with a __global__
// function per parallel loop, and says how each is launched. It is the
// second printer of the same kernels as targets/cpu/compiler/cpu_render.h: expressions
// and operators print through the same code, with CUDA's math spellings.
//
// How the loops map: a parallel loop whose body is one simd loop over its
// chunk [begin, end) runs a thread per `vector_width` elements (one when
// unset); any other parallel loop runs a warp per iteration, its simd loops
// spread over the 32 lanes (they have omp simd's meaning: iterations are
// independent but for declared reductions) and a simd reduction combined
// across the lanes by warp shuffles, unless it keeps a local array (a
// reduction's tile of kept columns), which one thread's loops fill and read:
// then a thread per iteration. All walk their iterations grid-stride.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_ir/kernel.h"

namespace switchyard {

// How one __global__ function of a kernel is launched (in a one-dimensional
// grid). Its one parameter is a struct of the kernel's buffers' device
// pointers, in the kernel's buffer order, then the fault word's when
// CudaKernel::may_fault.
struct CudaLaunch {
  std::string function;      // the extern "C" __global__ symbol
  int64_t items = 0;         // iterations of the parallel loop
  int threads_per_item = 1;  // 1: a thread each; 32: a warp each
  int block = 256;           // threads per block
  int64_t grid = 0;          // blocks: enough for every item, at most kCudaMaxGrid
};

// The most blocks a launch asks for; loops are grid-stride beyond it.
inline constexpr int64_t kCudaMaxGrid = 4096;

struct CudaKernel {
  std::string code;                  // the translation unit
  std::vector<CudaLaunch> launches;  // in the order they run
  bool may_fault = false;            // it reports SY_FAULT_* bits through `int* faults`
};

// Renders `kernel` with functions named `name`_<loop function>. A library
// primitive as its first statement is left to the entry, which queues it
// before the launches. Throws Error(kBackend) for what the CUDA renderer
// cannot print yet: blocked layouts, scratch buffers, a library primitive
// after other statements, copies, statements outside a parallel loop.
CudaKernel render_cuda_kernel(const kernel_ir::Kernel& kernel, const std::string& name);

}  // namespace switchyard
