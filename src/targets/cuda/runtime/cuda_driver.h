// One CUDA GPU through the driver API, which is loaded with dlopen the first
// time a GPU is asked for: nothing links libcuda, so the runtime loads and
// runs CPU artifacts where there is no driver, and asking for a GPU there
// fails with a RuntimeError naming the device and what is missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace switchyard {

class CudaGpu {
 public:
  // GPU `ordinal` (cuda:N) with its primary context. Throws RuntimeError
  // naming cuda:N when the driver cannot be loaded or initialised, or there
  // is no such GPU.
  static std::unique_ptr<CudaGpu> open(int ordinal);
  ~CudaGpu();
  CudaGpu(const CudaGpu&) = delete;
  CudaGpu& operator=(const CudaGpu&) = delete;

  const std::string& name() const { return name_; }  // "cuda:0"
  int compute_capability() const { return compute_capability_; }  // major * 10 + minor

  // Device memory, as the address the driver gives (CUdeviceptr).
  uint64_t allocate(size_t bytes);
  void release(uint64_t address);
  // Page-locked host memory (for every context), which copies to and from
  // a GPU read and write at the bus's speed without staging.
  void* allocate_host(size_t bytes);
  void release_host(void* pointer);
  void copy_to_gpu(uint64_t to, const void* from, size_t bytes);
  void copy_to_host(void* to, uint64_t from, size_t bytes);

  // Loads a cubin; the module lives as long as this object.
  void* load_module(const std::vector<uint8_t>& cubin);
  void* function(void* module, const std::string& symbol);
  // Launches `function` on a one-dimensional grid with one parameter, the
  // `param_bytes` bytes at `param` (a kernel's Buffers struct), on `stream`
  // (null: the default stream).
  void launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes, void* stream = nullptr);
  // Waits for everything launched and reports a failed kernel.
  void synchronize();

  // A stream of its own (work on it runs in order, apart from other
  // streams'), and work queued on one: copies, which return once queued,
  // and setting 32-bit words.
  void* create_stream();
  void destroy_stream(void* stream);
  void synchronize_stream(void* stream);
  void copy_to_gpu_async(uint64_t to, const void* from, size_t bytes, void* stream);
  void copy_to_host_async(void* to, uint64_t from, size_t bytes, void* stream);
  void copy_on_gpu_async(uint64_t to, uint64_t from, size_t bytes, void* stream);
  void set_words_async(uint64_t to, uint32_t value, size_t words, void* stream);

  // Makes its context the calling thread's, as cuBLASLt and cuDNN calls
  // need (runs may come from any thread); every call above does it itself.
  void bind() const;

 private:
  CudaGpu() = default;
  void check(int result, const char* what) const;

  std::string name_;
  int compute_capability_ = 0;
  int device_ = 0;
  void* context_ = nullptr;
  std::vector<void*> modules_;
};

}  // namespace switchyard
