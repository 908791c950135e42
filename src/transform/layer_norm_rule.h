// SimplifyExpr's layer-normalisation rules: exporters that predate ONNX's
// LayerNormalization (PyTorch at opset 13) write it as mean, subtract,
// power, mean, add, sqrt, divide, then a scale and a shift, which compile to
// four small kernels; as one nn.layer_norm they are one normalisation kernel.
#pragma once

#include <vector>

#include "transform/pattern_rules.h"

namespace switchyard {

// "layer_norm": divide(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)) over
// the last axis of a float32 x, as nn.layer_norm(x, 1, 0); "layer_norm_scale"
// and "layer_norm_shift": a constant per-channel multiply or add of an
// nn.layer_norm that has no scale (or shift) yet, folded into it. Each keeps
// the call's device, span and type, and folds only calls on one device.
std::vector<RewriteRule> layer_norm_rules();

}  // namespace switchyard
