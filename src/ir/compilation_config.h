// CompilationConfig: the devices of one build, the default device (for values
// nothing constrains) and the host device (control flow, shapes, I/O).
#pragma once

#include <string>
#include <vector>

#include "ir/virtual_device.h"

namespace switchyard {

struct CompilationConfig {
  std::vector<const VirtualDevice*> devices;  // fully constrained
  const VirtualDevice* default_device = nullptr;
  const VirtualDevice* host_device = nullptr;

  // From "cpu:0,cpu:1" (each item may carry a target: "cuda:0=cuda -arch=sm_90"),
  // plus optional default and host names ("" = the first device / the first
  // device whose kind can be the host). Where no listed device can be the
  // host ("cuda:0"), cpu:0 is added to the devices as the host. Throws
  // Error(kUsage) on a malformed or duplicate device, a default/host that is
  // not among the devices, or a host whose kind cannot be one.
  static CompilationConfig parse(const std::string& devices, const std::string& default_device = "",
                                 const std::string& host_device = "");
  static CompilationConfig from_devices(std::vector<const VirtualDevice*> devices,
                                        const VirtualDevice* default_device = nullptr,
                                        const VirtualDevice* host_device = nullptr);

  // The configured device matching a (possibly partial) wish by kind and id:
  // its target and scope come from the config. Null when none matches.
  const VirtualDevice* resolve(const VirtualDevice* wish) const;
  // Index in `devices`, or -1.
  int index_of(const VirtualDevice* device) const;
  std::string to_string() const;  // "cpu:0, cpu:1 (default cpu:0, host cpu:0)"
};

}  // namespace switchyard
