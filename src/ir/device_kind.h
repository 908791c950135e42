// Device kinds, each declared once in device_kind.cc: the name devices and
// targets are written with ("cpu" in "@cpu:0", "--devices cpu:0", target
// "cpu -mcpu=native"), whether it can be the host, and which operators its
// targets run. The runtime's device of a kind is made by its factory in
// runtime/device_registry.cc, keyed by the same name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

enum class DeviceKind : uint8_t { kUnconstrained, kCPU, kCUDA };

struct DeviceKindInfo {
  DeviceKind kind;
  const char* name;     // also its default target's text
  bool can_be_host;     // runs control flow, shape computations and I/O
  // Operators its code generator has no form for yet; planning moves them to
  // the host (device/target_support.h asks).
  std::vector<std::string_view> operators_not_run;
};

// In declaration order.
const std::vector<DeviceKindInfo>& device_kinds();
// The kind written `name`, or null.
const DeviceKindInfo* find_device_kind(std::string_view name);
// Null for kUnconstrained.
const DeviceKindInfo* device_kind_info(DeviceKind kind);
const char* device_kind_name(DeviceKind kind);  // "cpu", "cuda", "?"
// The kinds' names for messages: "cpu or cuda" with " or ", "cpu, cuda" with ", ".
std::string device_kind_names(std::string_view last_separator);

}  // namespace switchyard
