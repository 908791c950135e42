// The runtime's device API: memory, copies and host-side parallel work per
// device, and for a device that runs its own code (a GPU) device images,
// launches and its library's primitives. CPU devices are implemented here;
// another kind (CUDA) is one more subclass of Device, and nothing outside it
// names its class.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/primitive_spec.h"
#include "runtime/thread_pool.h"

namespace switchyard {

// Every device allocation is aligned to this many bytes.
constexpr size_t kDeviceAlignment = 64;

struct DeviceMemoryStats {
  size_t bytes_in_use = 0;  // live allocations, each rounded up to kDeviceAlignment
  size_t peak_bytes = 0;    // the most bytes_in_use has been
  size_t live_allocations = 0;
  uint64_t copies_in = 0;  // device-to-device copies that arrived here
  uint64_t bytes_copied_in = 0;
};

// A primitive of a device's own library (cuBLASLt, cuDNN on a GPU), made at
// load time by the device that runs it.
class DeviceLibraryPrimitive {
 public:
  virtual ~DeviceLibraryPrimitive() = default;
  // Bytes of device workspace one call needs.
  virtual size_t workspace_bytes() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // "cpu:0"
  const std::string& name() const { return name_; }
  const std::string& kind() const { return kind_; }
  int id() const { return id_; }

  // True when host code may read and write this device's memory directly,
  // so a host buffer can be handed to a kernel without staging.
  virtual bool host_accessible() const = 0;
  // At least `bytes` (0 allowed, never null), kDeviceAlignment-aligned.
  // Throws RuntimeError naming the device when memory runs out.
  virtual void* allocate(size_t bytes) = 0;
  // Releases memory from allocate(); null is ignored. Throws RuntimeError
  // for a pointer this device did not allocate.
  virtual void free(void* pointer) = 0;
  // Copies to and from host memory; both return when the copy is done.
  virtual void copy_from_host(void* device_destination, const void* host_source, size_t bytes) = 0;
  virtual void copy_to_host(void* host_destination, const void* device_source, size_t bytes) = 0;
  // Copies within this device's memory, in order with its other work.
  virtual void copy_within(void* destination, const void* source, size_t bytes) = 0;
  // Waits until all work queued on this device is done.
  virtual void synchronize() = 0;
  // Runs host-side work for kernels placed on this device on its threads.
  virtual void parallel_for(int64_t n, int64_t grain, const ParallelBody& body) = 0;
  virtual int num_threads() const = 0;

  // What a device that runs compiled device images (a GPU's cubins)
  // offers; the defaults throw RuntimeError naming the device: a CPU runs
  // model.so's code and oneDNN on the host.
  // Loads `image` for the device's lifetime and finds `functions` in it, in order.
  virtual std::vector<void*> load_functions(const std::vector<uint8_t>& image, const std::vector<std::string>& functions);
  // Queues `function` on the device: `grid` blocks of `block` threads, with
  // the `param_bytes` bytes at `param` as its one parameter.
  virtual void launch(void* function, int64_t grid, int block, const void* param, size_t param_bytes);
  // Sets `words` 32-bit words at `address` (this device's memory) to
  // `value`, in order with the device's other work. Host memory: at once.
  virtual void set_words(void* address, uint32_t value, size_t words);
  // Whether the device runs primitives of its own library
  // (make_library_primitive) instead of the host's oneDNN.
  virtual bool has_own_library() const { return false; }
  virtual std::unique_ptr<DeviceLibraryPrimitive> make_library_primitive(const PrimitiveSpec& spec);
  // Queues `primitive` (made by this device); `workspace` holds its workspace_bytes().
  virtual void run_library_primitive(const DeviceLibraryPrimitive& primitive, const void* const* inputs,
                                     void* const* outputs, void* workspace);
  // Memory of `host` that this device's copies read and write at full speed
  // (a GPU's page-locked pages), for the host's "pinned" arenas; null when
  // the device needs none.
  virtual std::unique_ptr<Device> make_pinned_host_memory(const Device& host) { return nullptr; }
  // Why code compiled for `compute_capability` (major * 10 + minor; 0: none
  // asked) cannot run here, or "" when it can.
  virtual std::string cannot_run_compute_capability(int compute_capability) const;
  // Why code compiled for the CPU features `cpu_features` (manifest names,
  // runtime/cpu_feature_names.h) cannot run here, or "" when it can.
  virtual std::string cannot_run_cpu_features(const std::vector<std::string>& cpu_features) const;

  DeviceMemoryStats memory_stats() const;
  // Counts a device-to-device copy that arrived here (see copy_between_devices).
  void record_copy_in(size_t bytes);

 protected:
  Device(std::string kind, int id);
  // For subclasses' allocators: what they hand out is at least
  // kDeviceAlignment bytes, a multiple of it.
  static size_t rounded_size(size_t bytes);
  // Records `bytes` (rounded) at `pointer` as in use.
  void record_allocation(void* pointer, size_t bytes);
  // Forgets `pointer`'s allocation and returns its rounded size; throws
  // RuntimeError naming the device for a pointer it did not allocate.
  size_t record_free(void* pointer);
  // Every allocation still live, for a destructor to release.
  std::unordered_map<void*, size_t> live_allocations() const;

 private:
  std::string kind_;
  int id_;
  std::string name_;
  mutable std::mutex stats_mutex_;
  DeviceMemoryStats stats_;
  std::unordered_map<void*, size_t> allocations_;  // pointer -> rounded size, under stats_mutex_
};

// Copies `bytes` from `source` on `source_device` to `destination` on
// `destination_device` (memcpy between host-accessible devices, through host
// memory otherwise) and records it on the destination device.
void copy_between_devices(Device& destination_device, void* destination, Device& source_device, const void* source,
                          size_t bytes);

// One device allocation, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& device, size_t bytes) : device_(&device), data_(device.allocate(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device* device() const { return device_; }
  void reset();

 private:
  Device* device_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace switchyard
