// How the runtime makes the device of each kind a manifest names ("cpu"),
// one row per kind in device_registry.cc. The kind names are those of
// ir/device_kind.cc; the runtime is a library of its own and cannot read
// the compiler's table.
#pragma once

#include <memory>
#include <string>

#include "runtime/device.h"

namespace switchyard {

struct DeviceFactory {
  const char* kind;
  // Parallel host-side work runs on `pool`.
  std::unique_ptr<Device> (*make)(int id, std::shared_ptr<ThreadPool> pool);
};

// Null when this runtime has no device of that kind.
const DeviceFactory* find_device_factory(const std::string& kind);

}  // namespace switchyard
