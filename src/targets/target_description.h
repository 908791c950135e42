// What a pass asks a target before code generation, one row per device
// kind in target_description.cc: whether a fused function becomes one of
// its library's primitives there, which layouts its primitives prefer on
// this machine, and whether its library knows a layout. Passes (PlanLayouts)
// ask here instead of calling a code generator or the runtime themselves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/device_kind.h"
#include "ir/expr.h"
#include "runtime/primitive_spec.h"

namespace switchyard {

struct TargetDescription {
  DeviceKind kind;
  // The library primitive that is the whole kernel of `primitive` on this
  // target (nothing computed around it), as kernel generation will make it;
  // nullopt when the kernel is loops, or when the target cannot lower the
  // function (lowering then reports what it lacks, with its span).
  std::optional<PrimitiveSpec> (*library_primitive)(const Function& primitive,
                                                    const std::vector<bool>& constant_inputs);
  // The library convolution (or 8-bit max pool) a kernel of `primitive`
  // runs before a generated element-wise loop over its result (an epilogue
  // no post-op took), as kernel generation will make it; nullopt for any
  // other kernel.
  std::optional<PrimitiveSpec> (*anchored_convolution)(const Function& primitive,
                                                       const std::vector<bool>& constant_inputs);
  // Throws std::exception saying why when the target's library does not
  // know the layout `format` ("nChw16c").
  void (*check_layout)(const std::string& format);
  // The channels per block of the blocked layout its primitives prefer here.
  int (*channel_block)();
  // Whether its primitives prefer channels last ("nhwc") here.
  bool (*prefers_channels_last)();
  // The facts of this machine that change the artifact this target makes
  // (its library's instruction set deciding planned layouts), as lines
  // ending in "\n": the artifact cache keys on them.
  std::string (*artifact_facts)();
  // The name of the implementation its library runs `spec` with on this
  // machine ("brg:avx512_core"); empty when it makes none.
  std::string (*library_implementation)(const PrimitiveSpec& spec);
  // Whether its library runs `spec` only with slow reference loops here.
  bool (*runs_reference)(const PrimitiveSpec& spec);
  // Whether `spec` (a primitive alone, its activations dense) would run
  // faster writing its primitives' layout, converted once for readers that
  // take only dense values, than writing them dense (the CPU's Winograd
  // convolution reads and writes blocked or channels-last activations only).
  bool (*faster_writing_a_layout)(const PrimitiveSpec& spec);
};

// Null when the kind has no description (its values keep plain layouts).
const TargetDescription* target_description_for(DeviceKind kind);
// The descriptions of every kind that has one, in registry order.
const std::vector<const TargetDescription*>& target_descriptions();

}  // namespace switchyard
