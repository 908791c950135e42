// Where a value lives: {device kind, device id, target, memory scope,
// layout}, each part possibly unconstrained. Targets and virtual devices are interned, so
// equality is pointer equality and they are never freed.
//
// Text forms: "@cpu:0" is the fully constrained device cpu:0 with its kind's
// default target ("cpu" / "cuda") and scope "global";
// '@{device="cpu:0", target="cuda -arch=sm_90", scope="global"}' states each
// part, and a part left out is unconstrained.
//
// The layout is how a tensor's elements lie in its buffer: "" for dense
// row-major (what every loop kernel, copy, input and output reads), or one
// of the IR's layouts (ir/layout.h: "nhwc", "nChw16c") that PlanLayouts
// gives values passed only between library primitives. It is a part of the device, like the
// memory scope, so with_fields carries it and the placement checker compares
// it wherever a value passes from one kernel to another; it never makes
// values live on different devices (same_device ignores it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/device_kind.h"

namespace switchyard {

// A compilation target: a kind ("cpu", "cuda") and its options
// ("-mcpu=native", "-arch=sm_90"). Interned.
class Target {
 public:
  // Parses "cpu -mcpu=native"; throws Error(kUsage) on an unknown kind.
  static const Target* get(std::string_view text);
  // The default target of a device kind: its name ("cpu" or "cuda").
  static const Target* default_for(DeviceKind kind);
  DeviceKind kind() const { return kind_; }
  const std::vector<std::string>& options() const { return options_; }
  // "-flag=value" lookup; "" when absent.
  std::string option(std::string_view flag) const;
  const std::string& str() const { return text_; }

 private:
  Target() = default;
  DeviceKind kind_ = DeviceKind::kCPU;
  std::vector<std::string> options_;
  std::string text_;
};

class VirtualDevice {
 public:
  static constexpr int kNoId = -1;
  // The fully unconstrained device.
  static const VirtualDevice* unconstrained();
  static const VirtualDevice* get(DeviceKind kind, int device_id, const Target* target,
                                  std::string_view memory_scope, std::string_view layout = "");
  // "cpu:1" (fully constrained, default target, scope "global").
  static const VirtualDevice* for_device(DeviceKind kind, int device_id);
  // Parses "cpu:1" (fully constrained as above), "cpu" (kind only), or the
  // full form's body 'device="cpu:0", target="...", scope="...", layout="..."'.
  // Throws Error(kParse) naming the text on malformed input.
  static const VirtualDevice* parse(std::string_view text);

  DeviceKind kind() const { return kind_; }
  int device_id() const { return device_id_; }
  const Target* target() const { return target_; }  // null = unconstrained
  const std::string& memory_scope() const { return scope_; }  // "" = unconstrained
  const std::string& layout() const { return layout_; }        // "" = dense row-major
  // This device with another layout ("" = dense row-major).
  const VirtualDevice* with_layout(std::string_view layout) const;

  bool is_fully_unconstrained() const;
  bool is_fully_constrained() const;
  // Merges two partial devices; null when they conflict (layouts included).
  static const VirtualDevice* join(const VirtualDevice* a, const VirtualDevice* b);
  // Parts of `this` that are unconstrained are taken from `defaults`.
  const VirtualDevice* with_defaults(const VirtualDevice* defaults) const;
  // Same physical device (kind and id), ignoring target, scope and layout.
  bool same_device(const VirtualDevice* other) const;

  // "cpu:0" for a short-form device, else '{device="cpu:0", ...}'.
  std::string str() const;
  // "cpu:0", or "cpu:?" / "?" when parts are unconstrained.
  std::string device_name() const;
  // Whether str() is the short "kind:id" form.
  bool is_short_form() const;

 private:
  VirtualDevice() = default;
  DeviceKind kind_ = DeviceKind::kUnconstrained;
  int device_id_ = kNoId;
  const Target* target_ = nullptr;
  std::string scope_;
  std::string layout_;
};

}  // namespace switchyard
