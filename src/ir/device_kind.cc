// The device kinds. Adding one is a row here (and its enumerator), its
// runtime device factory, and its code generator.
#include "ir/device_kind.h"

namespace switchyard {

const std::vector<DeviceKindInfo>& device_kinds() {
  static const std::vector<DeviceKindInfo> kinds = {
      {DeviceKind::kCPU, "cpu", true, {}},
      // Anchors run as cuBLASLt and cuDNN calls where those take them, else
      // as loops; batch_norm's moving statistics pass through as buffer
      // copies, which the CUDA renderer does not print. cumsum and
      // topk_indices lower to loops the CUDA renderer could print, but no
      // GPU has run them yet.
      {DeviceKind::kCUDA, "cuda", false, {"nn.batch_norm", "cumsum", "topk_indices"}},
  };
  return kinds;
}

const DeviceKindInfo* find_device_kind(std::string_view name) {
  for (const DeviceKindInfo& k : device_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

const DeviceKindInfo* device_kind_info(DeviceKind kind) {
  for (const DeviceKindInfo& k : device_kinds())
    if (k.kind == kind) return &k;
  return nullptr;
}

const char* device_kind_name(DeviceKind kind) {
  const DeviceKindInfo* info = device_kind_info(kind);
  return info ? info->name : "?";
}

std::string device_kind_names(std::string_view last_separator) {
  std::string out;
  const std::vector<DeviceKindInfo>& kinds = device_kinds();
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? last_separator : std::string_view(", ");
    out += kinds[i].name;
  }
  return out;
}

}  // namespace switchyard
