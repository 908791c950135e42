// generate_cuda_kernel: a fused group's kernel IR, built as for the CPU (one
// lowering, so both targets compute the same), printed as CUDA C++.
#include "backend/code_generators.h"
#include "backend/kernel.h"
#include "support/error.h"

namespace switchyard {

KernelSource generate_cuda_kernel(const Function& primitive, const std::string& name,
                                  const std::vector<bool>& constant_inputs) {
  KernelSource source = generate_cpu_kernel(primitive, name, constant_inputs);
  if (source.primitive || !source.kernel_ir)
    throw Error(ErrorKind::kBackend,
                "kernel " + name + " is a library primitive (" + (source.kernel_ir ? source.kernel_ir->comment : name) +
                    "), which a cuda device cannot run yet; planning should have kept it on the host",
                source.span);
  code_generator_for(DeviceKind::kCUDA)->render(source);
  return source;
}

}  // namespace switchyard
