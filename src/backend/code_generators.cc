// The code generators by device kind. A new kind's generator is its own
// files plus one row here.
#include "backend/code_generators.h"

#include "backend/cpu_render.h"
#include "targets/cuda/compiler/cuda_compile.h"
#include "targets/cuda/compiler/cuda_render.h"
#include "backend/toolchain.h"

namespace switchyard {

namespace {

void render_cpu(KernelSource& kernel) { kernel.code = render_cpu_kernel(*kernel.kernel_ir, kernel.name); }

// Its -mcpu option picks the CPU model.
std::vector<std::string> cpu_compile_flags(const Target* target) { return Toolchain::cpu_flags(target->option("-mcpu")); }

void render_cuda(KernelSource& kernel) {
  CudaKernel cuda = render_cuda_kernel(*kernel.kernel_ir, kernel.name);
  kernel.code = std::move(cuda.code);
  kernel.launches = std::move(cuda.launches);
  kernel.may_fault = cuda.may_fault;
}

// Its -arch option picks the GPU architecture (sm_90 when none).
std::vector<uint8_t> cuda_compile_image(const KernelSource& kernel, const Target* target, const std::string& cache_dir,
                                        bool* cached) {
  return compile_cuda_cached(kernel.code, kernel.name, cuda_arch(target), cache_dir, cached).image;
}

void cpu_record_requirements(const Target* target, const Toolchain& toolchain, ManifestDevice& device) {
  device.cpu_features = toolchain.cpu_features(target->option("-mcpu"));
}

void cuda_record_requirements(const Target* target, const Toolchain&, ManifestDevice& device) {
  device.compute_capability = cuda_compute_capability(cuda_arch(target));
}

}  // namespace

const CodeGenerator* code_generator_for(DeviceKind kind) {
  static const std::vector<CodeGenerator> generators = {
      {DeviceKind::kCPU, generate_cpu_kernel, render_cpu, cpu_compile_flags, nullptr, "", cpu_record_requirements},
      {DeviceKind::kCUDA, generate_cuda_kernel, render_cuda, nullptr, cuda_compile_image, ".cubin",
       cuda_record_requirements},
  };
  for (const CodeGenerator& g : generators)
    if (g.kind == kind) return &g;
  return nullptr;
}

}  // namespace switchyard
