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

#include "targets/cuda/runtime/cuda_driver.h"
#include "targets/cuda/runtime/cuda_library_primitive.h"
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
  std::string cannot_run_compute_capability(int compute_capability) const override;
  // Cubins, loaded for this device's lifetime; launches and word fills are queued on the stream.
  std::vector<void*> load_functions(const std::vector<uint8_t>& image,
                                    const std::vector<std::string>& functions) override;
  void launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes) override;
  void set_words(void* address, uint32_t value, size_t words) override;
  // cuBLASLt and cuDNN primitives (CudaLibraryPrimitive's errors), queued on the stream.
  bool has_own_library() const override { return true; }
  std::unique_ptr<DeviceLibraryPrimitive> make_library_primitive(const PrimitiveSpec& spec) override;
  void run_library_primitive(const DeviceLibraryPrimitive& primitive, const void* const* inputs, void* const* outputs,
                             void* workspace) override;
  // Page-locked host pages from this GPU's driver.
  std::unique_ptr<Device> make_pinned_host_memory(const Device& host) override;

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
