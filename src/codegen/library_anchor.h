// A oneDNN anchor kernel: the anchor (a product, convolution or pool) and as
// much of its element-wise epilogue as oneDNN fuses become a PrimitiveSpec
// that the runtime makes into a primitive when the artifact loads
// (targets/cpu/runtime/dnnl_primitive.h). library_anchor.cc says what oneDNN computes for each
// anchor and writes the kernel; library_epilogue.cc maps the epilogue onto
// the primitive's bias and post-ops.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "codegen/group_kernel.h"

namespace switchyard {

using Dims = std::vector<int64_t>;

Dims dense_strides(const Dims& shape);

// The anchor alone as a primitive, and how the IR output maps onto its
// destination's dimensions (they differ for nn.dense and promoted matmul).
struct DnnlAnchor {
  PrimitiveSpec spec;  // no bias, no post-ops
  bool is_convolution = false;
  std::function<std::optional<Dims>(const Dims&)> to_destination;  // IR output dims -> dst dims
};

DnnlAnchor dnnl_anchor(const CpuKernel& k);
// The index of `e` among the kernel's parameters; -1 when it is computed inside.
int parameter_index(const CpuKernel& k, const Expr& e);

// The element-wise epilogue as oneDNN sees it: an optional bias the
// primitive adds itself, then post-ops for the rest of the chain.
struct DnnlEpilogue {
  const CallNode* base = nullptr;  // the value the primitive computes: the anchor, or its bias add
  int bias_input = -1;             // the parameter given as the primitive's bias
  Dims bias_dims;
  // The chain after `base` as post-ops; nullopt when some step has none
  // (the chain then runs as a loop after the primitive).
  std::optional<std::vector<PrimitivePostOp>> post_ops;
  // What the primitive computes with its post-ops: the kernel's root, or the
  // argument of a GELU left to the loop after it.
  const CallNode* post_ops_root = nullptr;
};

// `gelu_post_op`: whether an exact GELU ending the epilogue becomes a
// post-op; if not, it is left to the loop after the primitive.
DnnlEpilogue map_dnnl_epilogue(const CpuKernel& k, const DnnlAnchor& anchor, bool gelu_post_op);

}  // namespace switchyard
