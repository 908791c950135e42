// SimplifyQuantizeChains: exact identities of quantize and dequantize steps
// that stay element-wise arithmetic after FuseQDQ.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Two rewrites of the importer's spelling of QuantizeLinear (divide, round,
// add, clip, cast) and DequantizeLinear (cast, subtract, multiply), each
// exact, so the interpreter's result is unchanged bit for bit:
//
//   cast(cast(c, uint8 or int8), float32)  ->  c
//     where c = clip(add?(round(x), k)) with integral k and bounds inside the
//     8-bit type's range: c is already an integer of that range (clip maps
//     NaN to its lower bound), so the round trip through 8 bits changes
//     nothing. A dequantize right after a quantize (a QDQ pair between two
//     float operators) then reads the clipped float instead of converting
//     it to 8 bits and back.
//
//   clip(add?(round(divide(relu(v), s)), zp), lo, hi)  ->  the same with v
//     where s > 0 and zp <= lo: every v <= 0 (NaN too: relu(NaN) is 0, and a
//     NaN clips to lo) quantizes to lo either way. ONNX Runtime drops such a
//     Relu before a QuantizeLinear the same way.
//
// The intermediate steps must be read only by the next one (else the
// rewrite would compute them twice). Both shorten the loops of QDQ models'
// residual joins (dequantize, add, quantize, dequantize, relu, quantize).
// Requires InferType.
Pass SimplifyQuantizeChains();

}  // namespace switchyard
