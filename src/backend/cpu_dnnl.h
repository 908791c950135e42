// What a oneDNN anchor kernel computes, shared by its three generators:
// the operation (cpu_dnnl.cc), the epilogue as bias and post-ops
// (cpu_dnnl_epilogue.cc) and the generated plan and call
// (cpu_dnnl_plan.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/cpu_kernel.h"

namespace switchyard {

using Dims = std::vector<int64_t>;

// "dims{1, 2}".
std::string dnnl_dims(const Dims& values);
Dims dense_strides(const Dims& shape);

struct DnnlDescriptor {
  std::string name;  // field of the generated Plan
  Dims shape, strides;
};

struct DnnlArgument {
  std::string role;     // "DNNL_ARG_SRC"
  std::string desc;     // descriptor name
  std::string pointer;  // "buffers.in0_x"
};

// What oneDNN computes for the anchor, and how the IR output maps onto its
// destination's dimensions (they differ for nn.dense and promoted matmul).
struct DnnlOperation {
  std::string primitive;  // "dnnl::matmul"
  // The operation descriptor's constructor arguments, given the weights
  // descriptor's expression and whether a bias descriptor `p.bias` is passed.
  std::function<std::string(const std::string& weights, bool bias)> description;
  std::vector<DnnlDescriptor> descriptors;  // "weights" among them when there are weights
  std::vector<DnnlArgument> arguments;      // sources other than the weights
  int weights_input = -1;                   // the parameter holding the weights, if any
  // Whether oneDNN may choose the weights' layout: it then reads a copy
  // reordered once (constant weights) or per call.
  bool weights_any = false;
  // Whether oneDNN may choose src and dst layouts (the description then
  // names `src_any` and `dst_any`): the kernel reorders around the primitive.
  bool activations_any = false;
  bool is_convolution = false;
  std::function<std::optional<Dims>(const Dims&)> to_destination;  // IR output dims -> dst dims
};

DnnlOperation dnnl_operation(const CpuKernel& k);

struct DnnlPostOp {
  std::string append;  // the post_ops call
  int input = -1;      // the parameter a binary or sum post-op reads
  Dims operand;        // a binary post-op's operand dims in the destination's view
  bool sum = false;    // the residual is copied into the destination before the primitive runs
};

// The element-wise epilogue as oneDNN sees it: an optional bias the
// primitive adds itself, then post-ops for the rest of the chain.
struct DnnlEpilogue {
  const CallNode* base = nullptr;  // the value the primitive computes: the anchor, or its bias add
  int bias_input = -1;             // the parameter given as the primitive's bias
  Dims bias_dims;
  // The chain after `base` as post-ops; nullopt when some step has none
  // (it then runs as a loop after the primitive).
  std::optional<std::vector<DnnlPostOp>> post_ops;
};

DnnlEpilogue map_dnnl_epilogue(const CpuKernel& k, const DnnlOperation& operation);

// Writes the Plan (descriptors, one primitive per thread count, cached
// reordered weights) and the call into k.definitions and k.entry.
// `destination` is the buffer the primitive writes.
void write_dnnl_plan_and_call(CpuKernel& k, const DnnlOperation& operation, const DnnlEpilogue& epilogue,
                              const std::string& destination);

}  // namespace switchyard
