// PlanLayouts: the layout of each value passed between oneDNN convolutions
// and pools, as part of its virtual device.
#pragma once

#include "transform/pass.h"

namespace switchyard {

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
Pass PlanLayouts(int channel_block, bool channels_last);

// PlanLayouts for the oneDNN of this process: 16-channel blocks with
// AVX-512, 8 with AVX2, channels last where its AVX-512 kernels run.
Pass PlanLayouts();

}  // namespace switchyard
