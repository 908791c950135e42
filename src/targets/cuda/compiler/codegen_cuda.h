// The CUDA target's code generator (its row of targets/code_generators.cc):
// kernels as CUDA C++ compiled by NVRTC into a cubin stored beside model.so,
// anchors through cuBLASLt and cuDNN.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "targets/code_generators.h"

namespace switchyard {

// cuBLASLt and cuDNN as the library of a CUDA kernel's anchor.
const AnchorLibrary& cuda_libraries();

// The kernel IR for a CUDA target, rendered as CUDA C++
// (targets/cuda/compiler/cuda_render.h): an anchor cuBLASLt or cuDNN runs
// (cuda_library_makes) is their primitive, run by the entry before the
// loops of the epilogue they do not fuse; any other anchor is loops.
KernelSource generate_cuda_kernel(const Function& primitive, const std::string& name,
                                  const std::vector<bool>& constant_inputs = {});

const CodeGenerator& cuda_code_generator();

}  // namespace switchyard
