// Device bookkeeping and copies between devices (each kind's device class
// lives in its target folder, targets/<kind>/runtime/).
#include "runtime/device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {

Device::Device(std::string kind, int id) : kind_(std::move(kind)), id_(id), name_(kind_ + ":" + std::to_string(id)) {}

std::vector<void*> Device::load_functions(const std::vector<uint8_t>&, const std::vector<std::string>&) {
  throw RuntimeError(name() + " runs no device images");
}

void Device::launch(void*, int64_t, int, const void*, size_t) {
  throw RuntimeError(name() + " launches no device functions");
}

void Device::set_words(void* address, uint32_t value, size_t words) {
  if (!host_accessible()) throw RuntimeError(name() + " cannot set words in its memory");
  uint32_t* word = static_cast<uint32_t*>(address);
  std::fill(word, word + words, value);
}

std::unique_ptr<DeviceLibraryPrimitive> Device::make_library_primitive(const PrimitiveSpec&) {
  throw RuntimeError(name() + " has no library of its own (its primitives are the host's oneDNN)");
}

void Device::run_library_primitive(const DeviceLibraryPrimitive&, const void* const*, void* const*, void*) {
  throw RuntimeError(name() + " has no library of its own (its primitives are the host's oneDNN)");
}

std::string Device::cannot_run_compute_capability(int compute_capability) const {
  if (compute_capability <= 0) return "";
  return "its kernels were compiled for a GPU's compute capability, but " + name() + " is not a GPU";
}

std::string Device::cannot_run_cpu_features(const std::vector<std::string>& cpu_features) const {
  if (cpu_features.empty()) return "";
  return "its code was compiled for CPU features, but " + name() + " is not a CPU";
}

DeviceMemoryStats Device::memory_stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

void Device::record_copy_in(size_t bytes) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  stats_.copies_in += 1;
  stats_.bytes_copied_in += bytes;
}

size_t Device::rounded_size(size_t bytes) {
  return bytes == 0 ? kDeviceAlignment : (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

void Device::record_allocation(void* pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  allocations_.emplace(pointer, bytes);
  stats_.bytes_in_use += bytes;
  stats_.live_allocations += 1;
  if (stats_.bytes_in_use > stats_.peak_bytes) stats_.peak_bytes = stats_.bytes_in_use;
}

size_t Device::record_free(void* pointer) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  auto it = allocations_.find(pointer);
  if (it == allocations_.end()) throw RuntimeError(name() + ": free of memory this device did not allocate");
  size_t bytes = it->second;
  allocations_.erase(it);
  stats_.bytes_in_use -= bytes;
  stats_.live_allocations -= 1;
  return bytes;
}

std::unordered_map<void*, size_t> Device::live_allocations() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return allocations_;
}

void copy_between_devices(Device& destination_device, void* destination, Device& source_device, const void* source,
                          size_t bytes) {
  if (bytes != 0) {
    if (destination_device.host_accessible() && source_device.host_accessible()) {
      std::memcpy(destination, source, bytes);
    } else if (source_device.host_accessible()) {
      destination_device.copy_from_host(destination, source, bytes);
    } else if (destination_device.host_accessible()) {
      source_device.copy_to_host(destination, source, bytes);
    } else {
      std::vector<unsigned char> staging(bytes);
      source_device.copy_to_host(staging.data(), source, bytes);
      destination_device.copy_from_host(destination, staging.data(), bytes);
    }
  }
  destination_device.record_copy_in(bytes);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (device_ && data_) device_->free(data_);
  device_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace switchyard
