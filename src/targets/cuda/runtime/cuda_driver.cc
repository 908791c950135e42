// The driver API entry points used, resolved by name from libcuda.so.1 (the
// _v2 names are the ones cuda.h's macros select). Types are the driver ABI's:
// CUresult an int, handles opaque pointers, device addresses 64-bit.
#include "targets/cuda/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {

using Result = int;
using Pointer = unsigned long long;

struct Driver {
  void* library = nullptr;
  std::string load_error;  // why it could not be loaded or initialised
  Result (*init)(unsigned);
  Result (*device_count)(int*);
  Result (*device_get)(int*, int);
  Result (*device_attribute)(int*, int, int);
  Result (*primary_retain)(void**, int);
  Result (*primary_release)(int);
  Result (*set_current)(void*);
  Result (*mem_alloc)(Pointer*, size_t);
  Result (*mem_free)(Pointer);
  Result (*copy_htod)(Pointer, const void*, size_t);
  Result (*copy_dtoh)(void*, Pointer, size_t);
  Result (*module_load)(void**, const void*);
  Result (*module_unload)(void*);
  Result (*module_function)(void**, void*, const char*);
  Result (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
  Result (*synchronize)();
  Result (*error_string)(Result, const char**);
  Result (*stream_create)(void**, unsigned);
  Result (*stream_destroy)(void*);
  Result (*stream_synchronize)(void*);
  Result (*copy_htod_async)(Pointer, const void*, size_t, void*);
  Result (*copy_dtoh_async)(void*, Pointer, size_t, void*);
  Result (*copy_dtod_async)(Pointer, Pointer, size_t, void*);
  Result (*memset_d32_async)(Pointer, unsigned, size_t, void*);
  Result (*host_alloc)(void**, size_t, unsigned);
  Result (*host_free)(void*);
};

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;
constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING: no implicit waits on the default stream
constexpr unsigned kHostAllocPortable = 1;  // CU_MEMHOSTALLOC_PORTABLE: page-locked for every context
// cuLaunchKernel's `extra` markers: a parameter buffer, its size, the end.
void* const kLaunchParamBuffer = reinterpret_cast<void*>(1);
void* const kLaunchParamSize = reinterpret_cast<void*>(2);
void* const kLaunchEnd = nullptr;

template <typename F>
bool resolve(Driver& d, F& f, const char* symbol) {
  f = reinterpret_cast<F>(dlsym(d.library, symbol));
  if (!f) d.load_error = std::string("libcuda.so.1 has no ") + symbol;
  return f != nullptr;
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    d.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.library) {
      const char* why = dlerror();
      d.load_error = std::string("the CUDA driver is not installed (") + (why ? why : "libcuda.so.1") + ")";
      return;
    }
    bool ok = resolve(d, d.init, "cuInit") && resolve(d, d.device_count, "cuDeviceGetCount") &&
              resolve(d, d.device_get, "cuDeviceGet") && resolve(d, d.device_attribute, "cuDeviceGetAttribute") &&
              resolve(d, d.primary_retain, "cuDevicePrimaryCtxRetain") &&
              resolve(d, d.primary_release, "cuDevicePrimaryCtxRelease_v2") &&
              resolve(d, d.set_current, "cuCtxSetCurrent") && resolve(d, d.mem_alloc, "cuMemAlloc_v2") &&
              resolve(d, d.mem_free, "cuMemFree_v2") && resolve(d, d.copy_htod, "cuMemcpyHtoD_v2") &&
              resolve(d, d.copy_dtoh, "cuMemcpyDtoH_v2") && resolve(d, d.module_load, "cuModuleLoadData") &&
              resolve(d, d.module_unload, "cuModuleUnload") && resolve(d, d.module_function, "cuModuleGetFunction") &&
              resolve(d, d.launch, "cuLaunchKernel") && resolve(d, d.synchronize, "cuCtxSynchronize") &&
              resolve(d, d.error_string, "cuGetErrorString") &&
              resolve(d, d.stream_create, "cuStreamCreate") && resolve(d, d.stream_destroy, "cuStreamDestroy_v2") &&
              resolve(d, d.stream_synchronize, "cuStreamSynchronize") &&
              resolve(d, d.copy_htod_async, "cuMemcpyHtoDAsync_v2") &&
              resolve(d, d.copy_dtoh_async, "cuMemcpyDtoHAsync_v2") &&
              resolve(d, d.copy_dtod_async, "cuMemcpyDtoDAsync_v2") &&
              resolve(d, d.memset_d32_async, "cuMemsetD32Async") && resolve(d, d.host_alloc, "cuMemHostAlloc") &&
              resolve(d, d.host_free, "cuMemFreeHost");
    if (!ok) return;
    if (Result r = d.init(0); r != 0) {
      const char* text = nullptr;
      d.error_string(r, &text);
      d.load_error = std::string("the CUDA driver did not start (") + (text ? text : "error " + std::to_string(r)) + ")";
    }
  });
  return d;
}

}  // namespace

std::unique_ptr<CudaGpu> CudaGpu::open(int ordinal) {
  std::string name = "cuda:" + std::to_string(ordinal);
  const Driver& d = driver();
  if (!d.load_error.empty()) throw RuntimeError(name + ": no GPU can be used: " + d.load_error);
  int count = 0;
  d.device_count(&count);
  if (ordinal < 0 || ordinal >= count)
    throw RuntimeError(name + ": no such GPU (the driver sees " + std::to_string(count) + ")");
  std::unique_ptr<CudaGpu> gpu(new CudaGpu());
  gpu->name_ = name;
  gpu->check(d.device_get(&gpu->device_, ordinal), "cuDeviceGet");
  int major = 0, minor = 0;
  gpu->check(d.device_attribute(&major, kComputeCapabilityMajor, gpu->device_), "cuDeviceGetAttribute");
  gpu->check(d.device_attribute(&minor, kComputeCapabilityMinor, gpu->device_), "cuDeviceGetAttribute");
  gpu->compute_capability_ = major * 10 + minor;
  gpu->check(d.primary_retain(&gpu->context_, gpu->device_), "cuDevicePrimaryCtxRetain");
  gpu->check(d.set_current(gpu->context_), "cuCtxSetCurrent");
  return gpu;
}

CudaGpu::~CudaGpu() {
  const Driver& d = driver();
  for (void* m : modules_) d.module_unload(m);
  if (context_) d.primary_release(device_);
}

void CudaGpu::check(int result, const char* what) const {
  if (result == 0) return;
  const char* text = nullptr;
  driver().error_string(result, &text);
  throw RuntimeError(name_ + ": " + what + " failed: " + (text ? text : "error " + std::to_string(result)));
}

void CudaGpu::bind() const { check(driver().set_current(context_), "cuCtxSetCurrent"); }

uint64_t CudaGpu::allocate(size_t bytes) {
  bind();
  Pointer p = 0;
  check(driver().mem_alloc(&p, bytes), "cuMemAlloc (out of GPU memory?)");
  return p;
}

void CudaGpu::release(uint64_t address) {
  bind();
  check(driver().mem_free(address), "cuMemFree");
}

void* CudaGpu::allocate_host(size_t bytes) {
  bind();
  void* p = nullptr;
  check(driver().host_alloc(&p, bytes, kHostAllocPortable), "cuMemHostAlloc (out of page-locked host memory?)");
  return p;
}

void CudaGpu::release_host(void* pointer) {
  bind();
  check(driver().host_free(pointer), "cuMemFreeHost");
}

void CudaGpu::copy_to_gpu(uint64_t to, const void* from, size_t bytes) {
  bind();
  check(driver().copy_htod(to, from, bytes), "cuMemcpyHtoD");
}

void CudaGpu::copy_to_host(void* to, uint64_t from, size_t bytes) {
  bind();
  check(driver().copy_dtoh(to, from, bytes), "cuMemcpyDtoH");
}

void* CudaGpu::load_module(const std::vector<uint8_t>& cubin) {
  bind();
  void* module = nullptr;
  check(driver().module_load(&module, cubin.data()), "cuModuleLoadData (a cubin for another GPU?)");
  modules_.push_back(module);
  return module;
}

void* CudaGpu::function(void* module, const std::string& symbol) {
  void* f = nullptr;
  check(driver().module_function(&f, module, symbol.c_str()), ("cuModuleGetFunction " + symbol).c_str());
  return f;
}

void CudaGpu::launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes, void* stream) {
  bind();
  size_t size = param_bytes;
  void* extra[] = {kLaunchParamBuffer, const_cast<void*>(param), kLaunchParamSize, &size, kLaunchEnd};
  check(driver().launch(function, unsigned(grid), 1, 1, unsigned(block), 1, 1, 0, stream, nullptr, extra),
        "cuLaunchKernel");
}

void CudaGpu::synchronize() {
  bind();
  check(driver().synchronize(), "cuCtxSynchronize");
}

void* CudaGpu::create_stream() {
  bind();
  void* stream = nullptr;
  check(driver().stream_create(&stream, kStreamNonBlocking), "cuStreamCreate");
  return stream;
}

void CudaGpu::destroy_stream(void* stream) {
  bind();
  check(driver().stream_destroy(stream), "cuStreamDestroy");
}

void CudaGpu::synchronize_stream(void* stream) {
  bind();
  check(driver().stream_synchronize(stream), "cuStreamSynchronize (a kernel or copy on it failed)");
}

void CudaGpu::copy_to_gpu_async(uint64_t to, const void* from, size_t bytes, void* stream) {
  bind();
  check(driver().copy_htod_async(to, from, bytes, stream), "cuMemcpyHtoDAsync");
}

void CudaGpu::copy_to_host_async(void* to, uint64_t from, size_t bytes, void* stream) {
  bind();
  check(driver().copy_dtoh_async(to, from, bytes, stream), "cuMemcpyDtoHAsync");
}

void CudaGpu::copy_on_gpu_async(uint64_t to, uint64_t from, size_t bytes, void* stream) {
  bind();
  check(driver().copy_dtod_async(to, from, bytes, stream), "cuMemcpyDtoDAsync");
}

void CudaGpu::set_words_async(uint64_t to, uint32_t value, size_t words, void* stream) {
  bind();
  check(driver().memset_d32_async(to, value, words, stream), "cuMemsetD32Async");
}

}  // namespace switchyard
