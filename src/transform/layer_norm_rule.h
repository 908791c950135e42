// SimplifyExpr's layer-normalisation rules: exporters that predate ONNX's
// LayerNormalization (PyTorch at opset 13) write it as mean, subtract,
// power, mean, add, sqrt, divide, then a scale and a shift, which compile to
// four small kernels; as one nn.layer_norm they are one normalisation kernel.
#pragma once

#include "ir/expr.h"

namespace switchyard {

// For a call of divide, multiply or add that completes a layer
// normalisation over the last axis (divide: the normalisation itself;
// multiply and add: a constant per-channel scale or shift of an
// nn.layer_norm that has none yet), the equivalent nn.layer_norm call on
// the call's device, with its span and type; otherwise null.
Expr fold_layer_norm(const Call& call, const std::string& op_name);

}  // namespace switchyard
