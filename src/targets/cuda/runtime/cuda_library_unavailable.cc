// The CUDA library path of a runtime built without a CUDA toolkit (CI's
// Debian machine): cuda_library_makes still answers from the spec, but no
// primitive can be made, and saying so names the GPU and the library.
#include "targets/cuda/runtime/cuda_driver.h"
#include "targets/cuda/runtime/cuda_library_primitive.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

RuntimeError built_without_toolkit(const std::string& device, PrimitiveKind kind) {
  return RuntimeError(device + ": the " + primitive_kind_name(kind) + " primitive cannot run with " +
                      cuda_library_name(kind) +
                      ": this Switchyard was built without a CUDA toolkit (configure with one, SY_CUDA=ON, to run "
                      "library primitives on cuda devices)");
}

}  // namespace

// Never made: the constructor always throws, so the members below cannot be reached.
struct CudaLibraryPrimitive::Impl {
  PrimitiveSpec spec;
};

CudaLibraryPrimitive::CudaLibraryPrimitive(const PrimitiveSpec& spec, const CudaGpu& gpu) {
  throw built_without_toolkit(gpu.name(), spec.kind);
}

void require_cuda_library(PrimitiveKind kind, const std::string& device) { throw built_without_toolkit(device, kind); }

CudaLibraryPrimitive::~CudaLibraryPrimitive() = default;
const PrimitiveSpec& CudaLibraryPrimitive::spec() const { return impl_->spec; }
size_t CudaLibraryPrimitive::workspace_bytes() const { return 0; }
std::shared_ptr<const PreparedWeights> CudaLibraryPrimitive::prepare_weights(const void*) const { return nullptr; }
void CudaLibraryPrimitive::execute(const void* const*, void* const*, const PreparedWeights*, void*, void*) const {
  throw built_without_toolkit("cuda", impl_->spec.kind);
}

}  // namespace switchyard
