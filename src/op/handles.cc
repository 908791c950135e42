// The operator handles (see handles.h): each looked up once, by the name the
// registry knows it under.
#include "op/handles.h"

#include "op/quantized_attrs.h"

#include "op/registry.h"

namespace switchyard::ops {

#define SY_OP_HANDLE(function, name)                                  \
  const OpNode* function() {                                          \
    static const OpNode* const handle = as<OpNode>(Expr(op_get(name))); \
    return handle;                                                    \
  }

SY_OP_HANDLE(dense, "nn.dense")
SY_OP_HANDLE(matmul, "matmul")
SY_OP_HANDLE(batch_matmul, "nn.batch_matmul")
SY_OP_HANDLE(conv2d, "nn.conv2d")
SY_OP_HANDLE(quantized_conv2d, "qnn.conv2d")
SY_OP_HANDLE(quantized_dense, "qnn.dense")
SY_OP_HANDLE(max_pool2d, "nn.max_pool2d")
SY_OP_HANDLE(avg_pool2d, "nn.avg_pool2d")
SY_OP_HANDLE(global_avg_pool2d, "nn.global_avg_pool2d")
SY_OP_HANDLE(softmax, "nn.softmax")
SY_OP_HANDLE(layer_norm, "nn.layer_norm")
SY_OP_HANDLE(batch_norm, "nn.batch_norm")
SY_OP_HANDLE(cumsum, "cumsum")
SY_OP_HANDLE(topk_indices, "topk_indices")
SY_OP_HANDLE(sum, "sum")
SY_OP_HANDLE(mean, "mean")
SY_OP_HANDLE(max, "max")
SY_OP_HANDLE(prod, "prod")
SY_OP_HANDLE(relu, "nn.relu")
SY_OP_HANDLE(tanh, "tanh")
SY_OP_HANDLE(sqrt, "sqrt")
SY_OP_HANDLE(abs, "abs")
SY_OP_HANDLE(negative, "negative")
SY_OP_HANDLE(clip, "clip")
SY_OP_HANDLE(sigmoid, "sigmoid")
SY_OP_HANDLE(bias_add, "nn.bias_add")
SY_OP_HANDLE(add, "add")
SY_OP_HANDLE(subtract, "subtract")
SY_OP_HANDLE(multiply, "multiply")
SY_OP_HANDLE(divide, "divide")
SY_OP_HANDLE(power, "power")
SY_OP_HANDLE(cast, "cast")
SY_OP_HANDLE(concatenate, "concatenate")
SY_OP_HANDLE(split, "split")
SY_OP_HANDLE(take, "take")
SY_OP_HANDLE(reshape, "reshape")
SY_OP_HANDLE(expand_dims, "expand_dims")
SY_OP_HANDLE(squeeze, "squeeze")
SY_OP_HANDLE(transpose, "transpose")
SY_OP_HANDLE(strided_slice, "strided_slice")
SY_OP_HANDLE(broadcast_to, "broadcast_to")
SY_OP_HANDLE(layout_convert, "layout_convert")
SY_OP_HANDLE(erf, "erf")

#undef SY_OP_HANDLE

const OpNode* called_op(const CallNode& call) { return as<OpNode>(call.op); }

bool is_product(const OpNode* op) { return op && (op == dense() || op == matmul() || op == batch_matmul()); }

bool is_window(const OpNode* op) {
  return op && (op == conv2d() || op == max_pool2d() || op == avg_pool2d() || op == global_avg_pool2d());
}

}  // namespace switchyard::ops
