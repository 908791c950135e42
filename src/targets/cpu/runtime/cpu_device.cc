// The CPU device: host memory from the aligned heap (huge pages for large
// arenas), parallel work on a thread pool.
#include "targets/cpu/runtime/cpu_device.h"

#include <cstdlib>
#include <cstring>

#include "runtime/huge_pages.h"
#include "runtime/runtime_error.h"
#include "runtime/tensor_size.h"
#include "targets/cpu/runtime/cpu_features.h"

namespace switchyard {

CpuDevice::CpuDevice(int id, std::shared_ptr<ThreadPool> pool) : Device("cpu", id), pool_(std::move(pool)) {}

CpuDevice::~CpuDevice() {
  // Buffers outliving their device are a bug elsewhere; still return the memory.
  for (auto& [pointer, bytes] : live_allocations()) std::free(pointer);
}

void* CpuDevice::allocate(size_t bytes) {
  // A request beyond physical memory (a corrupt manifest, an overflowed size)
  // is refused here rather than left to the allocator's overcommit policy.
  const size_t physical_bytes = size_t(physical_memory_bytes());
  if (bytes > physical_bytes)
    throw RuntimeError(name() + ": out of memory allocating " + std::to_string(bytes) + " bytes (the machine has " +
                       std::to_string(physical_bytes) + ")");
  // 0 bytes still gets a block. Arenas of 2 MiB and more go on huge pages:
  // their first run faulted them in 4 KiB at a time.
  size_t rounded = rounded_size(bytes);
  void* pointer = allocate_maybe_on_huge_pages(rounded);
  if (!pointer) throw RuntimeError(name() + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  record_allocation(pointer, rounded);
  return pointer;
}

void CpuDevice::free(void* pointer) {
  if (!pointer) return;
  record_free(pointer);
  std::free(pointer);
}

void CpuDevice::copy_from_host(void* device_destination, const void* host_source, size_t bytes) {
  if (bytes) std::memcpy(device_destination, host_source, bytes);
}

void CpuDevice::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  if (bytes) std::memcpy(host_destination, device_source, bytes);
}

void CpuDevice::copy_within(void* destination, const void* source, size_t bytes) {
  if (bytes) std::memmove(destination, source, bytes);
}

void CpuDevice::parallel_for(int64_t n, int64_t grain, const ParallelBody& body) {
  pool_->parallel_for(n, grain, body);
}

std::string CpuDevice::cannot_run_cpu_features(const std::vector<std::string>& cpu_features) const {
  std::string names;
  for (const std::string& feature : missing_cpu_features(cpu_features)) names += (names.empty() ? "" : ", ") + feature;
  if (names.empty()) return "";
  return "model.so was compiled for CPU features this machine lacks: " + names +
         "; compile the model on (or for) this machine";
}

}  // namespace switchyard
