// IRModule: named global functions (in definition order) plus the module's
// list of devices. A value type; passes return new modules.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

class IRModule {
 public:
  IRModule() = default;

  // Functions in definition order.
  const std::vector<std::pair<std::string, Function>>& functions() const { return functions_; }
  bool contains(const std::string& name) const;
  // Throws Error(kUsage) naming the function when absent.
  const Function& lookup(const std::string& name) const;
  const Function* find(const std::string& name) const;
  // Adds or replaces (keeping its position).
  void add(const std::string& name, Function fn);
  void remove(const std::string& name);

  // The build's devices, when known (set by PlanDevices or the user).
  const std::vector<const VirtualDevice*>& devices() const { return devices_; }
  void set_devices(std::vector<const VirtualDevice*> devices) { devices_ = std::move(devices); }

  // True once PlanDevices has run: the placement invariants then hold.
  bool device_planned() const { return device_planned_; }
  void set_device_planned(bool planned) { device_planned_ = planned; }

 private:
  std::vector<std::pair<std::string, Function>> functions_;
  std::vector<const VirtualDevice*> devices_;
  bool device_planned_ = false;
};

}  // namespace switchyard
