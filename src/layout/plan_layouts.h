// PlanLayouts: the layout of each value passed between oneDNN convolutions
// and pools, as part of its virtual device.
#pragma once

#include <string>
#include <vector>

#include "transform/pass.h"

namespace switchyard {

// A user's layout wish given at build time: `node:GLOB=FORMAT` pins the
// result of every kernel whose span (an imported node's name, or
// file:line:column) matches the glob to a oneDNN format ("nhwc",
// "nChw8c", "nChw16c"); the values a primitive reads and writes with it
// follow, since they share one layout.
struct LayoutRule {
  std::string pattern;  // a glob on span text
  std::string format;
  std::string text;  // as written, for messages
};

// Parses "node:GLOB=FORMAT"; Error(kUsage) on a malformed rule or a format
// this process's oneDNN does not know.
LayoutRule parse_layout_rule(const std::string& text);

// Gives a blocked layout to each 4-d float32 value that a CPU kernel running
// one oneDNN convolution or pool (and nothing else) computes, when every
// reader is such a kernel reading it as its source or its sum's residual:
// between two primitives only oneDNN looks at the bytes, and reordering to
// and from dense NCHW around each convolution cost ResNet-50 a third of its
// run. Values that one primitive reads and writes share a layout (a
// primitive mixing them runs oneDNN's reference kernel), so each set of
// values primitives join gets channels last ("nhwc") when `channels_last`
// and no depthwise (grouped) convolution touches it, else channels in blocks
// of `channel_block` ("nChw16c"). The layout goes on the value's device (the
// call, its let variable), on the parameters of the fused functions that
// read it and on the result of the one that writes it; everything else
// stays dense row-major. Run on a fused, device-planned module, before
// lowering, which reads the layouts back.
//
// Conversions between layouts are otherwise made inside each primitive that
// reads or writes a dense value; PlanLayouts inserts a layout_convert kernel
// (a oneDNN reorder) where one conversion serves several: a primitive's
// result that loops or the model's result also read keeps its layout, and
// one conversion gives them a dense copy; a dense value that two or more
// primitives on one device read is converted once for them all.
//
// Each rule pins the sets of the values it matches: Error(kPlacement), with
// the value's span, when a matched value cannot have a layout (not a window
// primitive's result, or read otherwise: the error names the reader) or two
// rules pin one set differently; Error(kUsage) when a rule matches no
// kernel's result.
Pass PlanLayouts(int channel_block, bool channels_last, std::vector<LayoutRule> rules = {});

// PlanLayouts for the CPU target of this process (its description,
// targets/cpu/compiler/cpu_target.cc): oneDNN's 16-channel blocks with
// AVX-512, 8 with AVX2, channels last where its AVX-512 kernels run.
Pass PlanLayouts(std::vector<LayoutRule> rules = {});

}  // namespace switchyard
