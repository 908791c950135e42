// FuseQDQ: a QDQ model's convolutions and matrix products as int8 operators.
#pragma once

#include "transform/pass.h"

namespace switchyard {

// Rewrites, on CPU devices,
//
//   quantize(relu?(nn.bias_add?(nn.conv2d(dequantize(x), dequantize(w)), b)))
//   quantize(relu?(add?(nn.dense(dequantize(x), dequantize(w)), b)))   (Gemm)
//   quantize(relu?(add?(matmul(dequantize(x), dequantize(w)), b)))     (MatMul)
//
// as the ONNX importer spells QuantizeLinear and DequantizeLinear (cast,
// subtract, multiply; divide, round, add, clip, cast), into
// qnn.conv2d(x, w, b / (x_scale * w_scale[o])) or qnn.dense (its weights
// (N, K): a matmul's (K, N) are transposed once, here) with output_scales
// x_scale * w_scale[o] / y_scale, which the CPU back end runs as one oneDNN
// int8 primitive. Only where the result is within one quantum of ONNX's:
// x uint8 or int8 with one scale and zero point (2-D for the products); w
// an int8 constant with zero point 0 and one scale or one per output
// channel; b a float32 constant vector; y uint8 or int8 with one scale and
// zero point; every intermediate value read only by the next step (a float
// result read elsewhere would be computed twice).
// A matmul of (..., M, K) data is qnn.dense of the data's rows, reshaped
// in and out. The importer's QLinearConv and QLinearMatMul by constant
// weights (int32 products of the shifted operands, requantized) become
// qnn.conv2d and qnn.dense the same way, where the weights less their zero
// point fit int8. And max_pool2d(dequantize(x)) becomes
// dequantize(max_pool2d(x)) (exact) where every window holds an element
// of the image. Anything else keeps today's float32 path. Runs before
// FoldConstant, which would fold w's dequantization into float32 weights.
// Requires InferType.
Pass FuseQDQ();

}  // namespace switchyard
