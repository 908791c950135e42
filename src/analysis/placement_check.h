// The placement invariants of a device-planned module (ARCHITECTURE.md,
// invariant 2): every expression fully placed; no on_device left; a value
// crosses devices only through device_copy; every call's arguments live where
// its callee expects them; if conditions on the host.
#pragma once

#include "analysis/violation.h"
#include "ir/module.h"

namespace switchyard {

// The first violation found, or nullopt. `host` may be null (then if
// conditions are not checked). Linear, iterative.
std::optional<Violation> check_placement(const IRModule& mod, const VirtualDevice* host);

// Where a value lives: one device, or one per tuple field.
struct Placement {
  const VirtualDevice* device = nullptr;  // set for non-tuples
  std::vector<Placement> fields;          // set for tuples
  bool is_tuple() const { return device == nullptr; }
  // Every leaf device, in order.
  void leaves(std::vector<const VirtualDevice*>* out) const;
  std::string str() const;  // "cpu:0" or "(cpu:0, cpu:1)"
};

}  // namespace switchyard
