// The device kinds this runtime can make. A new kind is its Device
// subclass in files of its own plus one row here.
#include "runtime/device_registry.h"

#include "targets/cpu/runtime/cpu_device.h"
#include "targets/cuda/runtime/cuda_device.h"

#include <vector>

namespace switchyard {

namespace {

std::unique_ptr<Device> make_cpu_device(int id, std::shared_ptr<ThreadPool> pool) {
  return std::make_unique<CpuDevice>(id, std::move(pool));
}

// Its kernels run on the GPU: no thread pool.
std::unique_ptr<Device> make_cuda_device(int id, std::shared_ptr<ThreadPool>) { return std::make_unique<CudaDevice>(id); }

}  // namespace

const DeviceFactory* find_device_factory(const std::string& kind) {
  static const std::vector<DeviceFactory> factories = {
      {"cpu", make_cpu_device},
      {"cuda", make_cuda_device},
  };
  for (const DeviceFactory& f : factories)
    if (kind == f.kind) return &f;
  return nullptr;
}

}  // namespace switchyard
