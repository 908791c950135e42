// A CUDA GPU behind the runtime's device API (runtime/device.h): memory from
// cuMemAlloc, and one stream per device on which its kernels and copies run
// in the order the entry function queues them. A copy to or from the host
// waits for the work queued before it, which is exactly what its
// dependencies need: the host reads what the GPU wrote, or may reuse the
// host buffer the GPU read; kernels between copies run without waits.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda_driver.h"
#include "runtime/cuda_library_primitive.h"
#include "runtime/device.h"

namespace switchyard {

class CudaDevice final : public Device {
 public:
  // Opens GPU `id` (cuda:N). Throws RuntimeError naming cuda:N and what is
  // missing: the driver, or the GPU.
  explicit CudaDevice(int id);
  ~CudaDevice() override;

  bool host_accessible() const override { return false; }
  void* allocate(size_t bytes) override;
  void free(void* pointer) override;
  void copy_from_host(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  // Queued on the stream: nothing on the host waits for it.
  void copy_within(void* destination, const void* source, size_t bytes) override;
  void synchronize() override;
  // No host-side work runs on a GPU: a RuntimeError naming the device.
  void parallel_for(int64_t n, int64_t grain, const ParallelBody& body) override;
  int num_threads() const override { return 1; }

  int compute_capability() const { return gpu_->compute_capability(); }  // major * 10 + minor
  // Loads a cubin (for this device's lifetime) and finds `functions` in it, in order.
  std::vector<void*> load_functions(const std::vector<uint8_t>& image, const std::vector<std::string>& functions);
  // Queues `function` on the stream: `grid` blocks of `block` threads, with
  // the `param_bytes` bytes at `param` as its one parameter.
  void launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes);
  // Queues setting `words` 32-bit words at `address` to `value`.
  void set_words(void* address, uint32_t value, size_t words);
  // A cuBLASLt or cuDNN primitive for this GPU (CudaLibraryPrimitive's errors).
  std::unique_ptr<CudaLibraryPrimitive> make_library_primitive(const PrimitiveSpec& spec);
  // Queues `primitive` on the stream; `workspace` holds its workspace_bytes().
  void run_library_primitive(const CudaLibraryPrimitive& primitive, const void* const* inputs, void* const* outputs,
                             void* workspace);

 private:
  friend class PinnedHostMemory;
  std::unique_ptr<CudaGpu> gpu_;
  void* stream_ = nullptr;
};

// Host memory in page-locked pages from a GPU's driver, for the arenas of
// scope "pinned": the host buffers planned copies move to and from a GPU,
// which the driver then reads and writes at the bus's speed without staging
// them. To the CPU kernels that use it, it is the host device's memory.
class PinnedHostMemory final : public Device {
 public:
  // The memory of `host` (it takes its name), page-locked through `gpu`'s driver.
  PinnedHostMemory(const Device& host, CudaDevice& gpu);
  ~PinnedHostMemory() override;

  bool host_accessible() const override { return true; }
  void* allocate(size_t bytes) override;
  void free(void* pointer) override;
  void copy_from_host(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  void copy_within(void* destination, const void* source, size_t bytes) override;
  void synchronize() override {}
  // Only memory: the host device runs the work.
  void parallel_for(int64_t n, int64_t grain, const ParallelBody& body) override;
  int num_threads() const override { return 1; }

 private:
  CudaGpu& gpu_;
};

}  // namespace switchyard
