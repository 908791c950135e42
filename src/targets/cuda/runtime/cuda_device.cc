// CudaDevice: the GPU's memory, stream and kernels through CudaGpu.
#include "targets/cuda/runtime/cuda_device.h"

#include <algorithm>
#include <cstring>

#include "runtime/runtime_error.h"

namespace switchyard {

namespace {

uint64_t address_of(const void* pointer) { return uint64_t(reinterpret_cast<uintptr_t>(pointer)); }

}  // namespace

CudaDevice::CudaDevice(int id) : Device("cuda", id), gpu_(CudaGpu::open(id)) { stream_ = gpu_->create_stream(); }

CudaDevice::~CudaDevice() {
  try {
    gpu_->synchronize_stream(stream_);
    for (const auto& [pointer, bytes] : live_allocations()) gpu_->release(address_of(pointer));
    gpu_->destroy_stream(stream_);
  } catch (const RuntimeError&) {
    // A GPU that failed mid-run cannot be cleaned up further; its context goes with the process.
  }
}

void* CudaDevice::allocate(size_t bytes) {
  // cuMemAlloc refuses 0 bytes; its addresses are 256-byte aligned.
  size_t rounded = rounded_size(bytes);
  void* pointer = reinterpret_cast<void*>(uintptr_t(gpu_->allocate(rounded)));
  record_allocation(pointer, rounded);
  return pointer;
}

void CudaDevice::free(void* pointer) {
  if (!pointer) return;
  record_free(pointer);
  // Kernels queued before may still use it.
  gpu_->synchronize_stream(stream_);
  gpu_->release(address_of(pointer));
}

void CudaDevice::copy_from_host(void* device_destination, const void* host_source, size_t bytes) {
  if (bytes == 0) return;
  gpu_->copy_to_gpu_async(address_of(device_destination), host_source, bytes, stream_);
  gpu_->synchronize_stream(stream_);
}

void CudaDevice::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  if (bytes == 0) return;
  gpu_->copy_to_host_async(host_destination, address_of(device_source), bytes, stream_);
  gpu_->synchronize_stream(stream_);
}

void CudaDevice::copy_within(void* destination, const void* source, size_t bytes) {
  if (bytes != 0) gpu_->copy_on_gpu_async(address_of(destination), address_of(source), bytes, stream_);
}

void CudaDevice::synchronize() { gpu_->synchronize_stream(stream_); }

void CudaDevice::parallel_for(int64_t, int64_t, const ParallelBody&) {
  throw RuntimeError(name() + " runs no host-side parallel work: its kernels are launched on its stream");
}

std::vector<void*> CudaDevice::load_functions(const std::vector<uint8_t>& image,
                                              const std::vector<std::string>& functions) {
  void* module = gpu_->load_module(image);
  std::vector<void*> found;
  for (const std::string& f : functions) found.push_back(gpu_->function(module, f));
  return found;
}

void CudaDevice::launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes) {
  gpu_->launch(function, grid, block, param, param_bytes, stream_);
}

void CudaDevice::set_words(void* address, uint32_t value, size_t words) {
  gpu_->set_words_async(address_of(address), value, words, stream_);
}

std::unique_ptr<DeviceLibraryPrimitive> CudaDevice::make_library_primitive(const PrimitiveSpec& spec) {
  gpu_->bind();
  return std::make_unique<CudaLibraryPrimitive>(spec, *gpu_);
}

void CudaDevice::run_library_primitive(const DeviceLibraryPrimitive& primitive, const void* const* inputs,
                                       void* const* outputs, void* workspace) {
  gpu_->bind();
  static_cast<const CudaLibraryPrimitive&>(primitive).execute(inputs, outputs, nullptr, workspace, stream_);
}

std::unique_ptr<Device> CudaDevice::make_pinned_host_memory(const Device& host) {
  return std::make_unique<PinnedHostMemory>(host, *this);
}

std::string CudaDevice::cannot_run_compute_capability(int compute_capability) const {
  int has = this->compute_capability();
  if (has >= compute_capability) return "";
  auto version = [](int capability) { return std::to_string(capability / 10) + "." + std::to_string(capability % 10); };
  return "its kernels were compiled for compute capability " + version(compute_capability) + ", but this GPU has " +
         version(has) + "; compile the model for this GPU's architecture";
}

PinnedHostMemory::PinnedHostMemory(const Device& host, CudaDevice& gpu)
    : Device(host.kind(), host.id()), gpu_(*gpu.gpu_) {}

PinnedHostMemory::~PinnedHostMemory() {
  try {
    for (const auto& [pointer, bytes] : live_allocations()) gpu_.release_host(pointer);
  } catch (const RuntimeError&) {
    // A GPU that failed cannot release its pages; they go with the process.
  }
}

void* PinnedHostMemory::allocate(size_t bytes) {
  // cuMemHostAlloc's pages are aligned far beyond kDeviceAlignment.
  size_t rounded = rounded_size(bytes);
  void* pointer = gpu_.allocate_host(rounded);
  record_allocation(pointer, rounded);
  return pointer;
}

void PinnedHostMemory::free(void* pointer) {
  if (!pointer) return;
  record_free(pointer);
  gpu_.release_host(pointer);
}

void PinnedHostMemory::copy_from_host(void* device_destination, const void* host_source, size_t bytes) {
  if (bytes != 0) std::memcpy(device_destination, host_source, bytes);
}

void PinnedHostMemory::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  if (bytes != 0) std::memcpy(host_destination, device_source, bytes);
}

void PinnedHostMemory::copy_within(void* destination, const void* source, size_t bytes) {
  if (bytes != 0) std::memmove(destination, source, bytes);
}

void PinnedHostMemory::parallel_for(int64_t, int64_t, const ParallelBody&) {
  throw RuntimeError(name() + "'s pinned memory runs no work: its host device does");
}

}  // namespace switchyard
