// generate_cuda_kernel: a fused group's kernel IR, built as for the CPU (one
// lowering, so both targets compute the same) with cuBLASLt and cuDNN as the
// anchors' library, printed as CUDA C++ and compiled to a cubin.
#include "targets/cuda/compiler/codegen_cuda.h"

#include "targets/cuda/compiler/cuda_compile.h"
#include "targets/cuda/compiler/cuda_render.h"
#include "targets/cuda/runtime/cuda_library_primitive.h"

namespace switchyard {

const AnchorLibrary& cuda_libraries() {
  static const AnchorLibrary library{cuda_library_makes, false, [](const PrimitiveSpec&) { return false; },
                                     [](const PrimitiveSpec&) { return false; }};
  return library;
}

namespace {

void render_cuda(KernelSource& kernel) {
  CudaKernel cuda = render_cuda_kernel(*kernel.kernel_ir, kernel.name);
  kernel.code = std::move(cuda.code);
  kernel.launches.clear();
  for (const CudaLaunch& launch : cuda.launches) kernel.launches.push_back({launch.function, launch.grid, launch.block});
  kernel.may_fault = cuda.may_fault;
}

// Its -arch option picks the GPU architecture (sm_90 when none).
std::vector<uint8_t> cuda_compile_image(const KernelSource& kernel, const Target* target, const std::string& cache_dir,
                                        bool* cached) {
  return compile_cuda_cached(kernel.code, kernel.name, cuda_arch(target), cache_dir, cached).image;
}

void cuda_record_requirements(const Target* target, const Toolchain&, ManifestDevice& device) {
  device.compute_capability = cuda_compute_capability(cuda_arch(target));
}

}  // namespace

KernelSource generate_cuda_kernel(const Function& primitive, const std::string& name,
                                  const std::vector<bool>& constant_inputs) {
  KernelSource source = lower_kernel_source(primitive, name, constant_inputs, cuda_libraries());
  if (source.kernel_ir) render_cuda(source);
  return source;
}

const CodeGenerator& cuda_code_generator() {
  static const CodeGenerator generator{
      DeviceKind::kCUDA, generate_cuda_kernel, render_cuda, nullptr, cuda_compile_image, ".cubin",
      cuda_record_requirements, nullptr,
  };
  return generator;
}

}  // namespace switchyard
