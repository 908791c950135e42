// A library primitive on a CUDA GPU, made from the PrimitiveSpec the
// compiler writes for oneDNN on the CPU: matmuls through cuBLASLt (bias and
// ReLU as its epilogue), convolutions and pools through cuDNN. The libraries
// are loaded with dlopen the first time a primitive needs one, as the driver
// is (runtime/cuda_driver.h): nothing links them, so the runtime loads and
// runs CPU artifacts where they are not installed. Everything is chosen when
// the primitive is made (an artifact's load): the algorithm, by the
// library's heuristics, and the workspace it needs; a call only enqueues.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/device.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

class CudaGpu;

class CudaLibraryPrimitive final : public DeviceLibraryPrimitive {
 public:
  // For `gpu`, whose context must be current on the calling thread. Throws
  // RuntimeError naming the GPU when the spec is one the library path does
  // not run (cuda_library_refusal), the library cannot be loaded, or the
  // library refuses it (no algorithm, a failed call).
  CudaLibraryPrimitive(const PrimitiveSpec& spec, const CudaGpu& gpu);
  ~CudaLibraryPrimitive() override;
  CudaLibraryPrimitive(const CudaLibraryPrimitive&) = delete;
  CudaLibraryPrimitive& operator=(const CudaLibraryPrimitive&) = delete;

  const PrimitiveSpec& spec() const;
  // Bytes of GPU workspace one call needs (the chosen algorithm's).
  size_t workspace_bytes() const override;
  // cuBLASLt and cuDNN read the plain weights as they are: nothing needs
  // preparing, and prepare_weights returns null (the interface is
  // DnnlPrimitive's, so a device runs both kinds of primitive the same way).
  bool needs_prepared_weights() const { return false; }
  std::shared_ptr<const PreparedWeights> prepare_weights(const void* weights) const;
  // Enqueues the primitive on `stream` (a CUstream; null: the legacy default
  // stream) without waiting. `inputs` and `outputs` are the kernel's buffers
  // (GPU addresses); `workspace` holds workspace_bytes(), 256-byte aligned.
  // Safe to call from several threads at once.
  void execute(const void* const* inputs, void* const* outputs, const PreparedWeights* weights, void* workspace,
               void* stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Why the CUDA library path cannot run `spec`, from the spec alone (no GPU
// needed): empty when it can.
std::string cuda_library_refusal(const PrimitiveSpec& spec);
// Whether it can: the compiler asks at build time before placing a primitive
// on a CUDA device, keeping what is refused as a kernel of its own.
bool cuda_library_makes(const PrimitiveSpec& spec);
// The library that runs primitives of `kind`: "cuBLASLt" or "cuDNN".
const char* cuda_library_name(PrimitiveKind kind);
// Loads it (once per process) with every entry point a primitive calls;
// throws RuntimeError naming `device` and the library when it cannot.
void require_cuda_library(PrimitiveKind kind, const std::string& device);

}  // namespace switchyard
