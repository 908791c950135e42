// Parsing and lookup of a build's devices.
#include "ir/compilation_config.h"

#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

bool can_be_host(const VirtualDevice* device) { return device_kind_info(device->kind())->can_be_host; }

void check_host(const VirtualDevice* host) {
  if (!can_be_host(host))
    throw Error(ErrorKind::kUsage, host->device_name() + " cannot be the host (the host runs the entry's control flow " +
                                       "and stages its inputs and outputs): name a cpu device, or leave the host " +
                                       "out (the first cpu listed, or cpu:0 added where none is)");
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
    pos = end + 1;
  }
  return out;
}
}  // namespace

CompilationConfig CompilationConfig::parse(const std::string& devices, const std::string& default_device,
                                           const std::string& host_device) {
  std::vector<const VirtualDevice*> list;
  for (const std::string& item : split(devices, ',')) {
    if (item.empty()) throw Error(ErrorKind::kUsage, "empty device in --devices \"" + clipped_text(devices) + "\"");
    size_t eq = item.find('=');
    const VirtualDevice* vd;
    try {
      vd = VirtualDevice::parse(item.substr(0, eq));
      if (vd->device_id() == VirtualDevice::kNoId)
        throw Error(ErrorKind::kUsage, "device \"" + clipped_text(item) + "\" needs an id, e.g. cpu:0");
      if (eq != std::string::npos) {
        const Target* target = Target::get(item.substr(eq + 1));
        if (target->kind() != vd->kind())
          throw Error(ErrorKind::kUsage, "target \"" + clipped_text(target->str()) + "\" does not fit device " +
                                             clipped_text(vd->device_name()));
        vd = VirtualDevice::get(vd->kind(), vd->device_id(), target, "global");
      }
    } catch (const Error& e) {
      throw Error(ErrorKind::kUsage, "in --devices: " + e.message());
    }
    for (const VirtualDevice* other : list)
      if (other->same_device(vd)) throw Error(ErrorKind::kUsage, "device " + vd->device_name() + " listed twice");
    list.push_back(vd);
  }
  CompilationConfig config = from_devices(list);
  auto pick = [&](const std::string& name, const char* what) -> const VirtualDevice* {
    const VirtualDevice* wish;
    try {
      wish = VirtualDevice::parse(name);
    } catch (const Error& e) {
      throw Error(ErrorKind::kUsage, std::string("in --") + what + ": " + e.message());
    }
    const VirtualDevice* vd = config.resolve(wish);
    if (!vd)
      throw Error(ErrorKind::kUsage, std::string(what) + " device " + clipped_text(name) +
                                         " is not among the build's devices (" + clipped_text(devices) + ")");
    return vd;
  };
  if (!default_device.empty()) config.default_device = pick(default_device, "default");
  if (!host_device.empty()) {
    config.host_device = pick(host_device, "host");
    check_host(config.host_device);
  }
  return config;
}

CompilationConfig CompilationConfig::from_devices(std::vector<const VirtualDevice*> devices,
                                                  const VirtualDevice* default_device,
                                                  const VirtualDevice* host_device) {
  if (devices.empty()) throw Error(ErrorKind::kUsage, "a build needs at least one device");
  CompilationConfig c;
  c.devices = std::move(devices);
  c.default_device = default_device ? default_device : c.devices[0];
  if (host_device) check_host(host_device);
  for (const VirtualDevice* d : c.devices)
    if (can_be_host(d) && !host_device) host_device = d;
  // Devices that cannot be the host alone (cuda:0) get cpu:0 as their host,
  // as TVM adds its host target: the entry and the inputs' and outputs'
  // staging run there.
  if (!host_device) {
    host_device = VirtualDevice::for_device(DeviceKind::kCPU, 0);
    c.devices.push_back(host_device);
  }
  c.host_device = host_device;
  return c;
}

const VirtualDevice* CompilationConfig::resolve(const VirtualDevice* wish) const {
  const VirtualDevice* found = nullptr;
  for (const VirtualDevice* d : devices) {
    if (wish->kind() != DeviceKind::kUnconstrained && wish->kind() != d->kind()) continue;
    if (wish->device_id() != VirtualDevice::kNoId && wish->device_id() != d->device_id()) continue;
    // A wish stating its kind's default target accepts the configured target.
    if (wish->target() && wish->target() != d->target() && wish->target() != Target::default_for(wish->kind()))
      continue;
    if (!wish->memory_scope().empty() && wish->memory_scope() != d->memory_scope()) continue;
    if (found) return nullptr;  // ambiguous
    found = d;
  }
  return found;
}

int CompilationConfig::index_of(const VirtualDevice* device) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i] == device) return int(i);
  return -1;
}

std::string CompilationConfig::to_string() const {
  std::string out;
  for (const VirtualDevice* d : devices) out += (out.empty() ? "" : ", ") + d->str();
  return out + " (default " + default_device->device_name() + ", host " + host_device->device_name() + ")";
}

}  // namespace switchyard
