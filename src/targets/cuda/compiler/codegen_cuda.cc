// generate_cuda_kernel: a fused group's kernel IR, built as for the CPU (one
// lowering, so both targets compute the same) with cuBLASLt and cuDNN as the
// anchors' library, printed as CUDA C++.
#include "backend/code_generators.h"
#include "backend/kernel.h"
#include "targets/cuda/runtime/cuda_library_primitive.h"

namespace switchyard {

const AnchorLibrary& cuda_libraries() {
  static const AnchorLibrary library{cuda_library_makes, false, [](const PrimitiveSpec&) { return false; }};
  return library;
}

KernelSource generate_cuda_kernel(const Function& primitive, const std::string& name,
                                  const std::vector<bool>& constant_inputs) {
  KernelSource source = lower_kernel_source(primitive, name, constant_inputs, cuda_libraries());
  if (source.kernel_ir) code_generator_for(DeviceKind::kCUDA)->render(source);
  return source;
}

}  // namespace switchyard
