// Interned handles of the operators that passes and back ends single out:
// they compare an OpNode pointer (`op == ops::conv2d()`) instead of spelling
// the operator's name, so a renamed or misspelt operator fails to compile
// rather than silently matching nothing.
#pragma once

#include "ir/expr.h"

namespace switchyard::ops {

// Products and windows (the anchors a library runs).
const OpNode* dense();
const OpNode* matmul();
const OpNode* batch_matmul();
const OpNode* conv2d();
const OpNode* max_pool2d();
const OpNode* avg_pool2d();
const OpNode* global_avg_pool2d();
// Normalisations and scans.
const OpNode* softmax();
const OpNode* layer_norm();
const OpNode* batch_norm();
const OpNode* cumsum();
const OpNode* topk_indices();
// Reductions.
const OpNode* sum();
const OpNode* mean();
const OpNode* max();
const OpNode* prod();
// Element-wise operators the epilogues of library primitives take.
const OpNode* relu();
const OpNode* tanh();
const OpNode* sqrt();
const OpNode* abs();
const OpNode* negative();
const OpNode* clip();
const OpNode* sigmoid();
const OpNode* bias_add();
const OpNode* add();
const OpNode* subtract();
const OpNode* multiply();
const OpNode* divide();
const OpNode* power();
const OpNode* cast();
// Data movement.
const OpNode* concatenate();
const OpNode* split();
const OpNode* take();
const OpNode* reshape();
const OpNode* expand_dims();
const OpNode* squeeze();
const OpNode* transpose();
const OpNode* strided_slice();
const OpNode* broadcast_to();
const OpNode* layout_convert();
const OpNode* erf();

// The operator `call` calls, or null for a call of a function.
const OpNode* called_op(const CallNode& call);

// Families: a product (dense, matmul, batch_matmul) or a window
// (convolution, pools) reduces many inputs per output and is what a
// library primitive runs. Null is neither.
bool is_product(const OpNode* op);
bool is_window(const OpNode* op);

}  // namespace switchyard::ops
