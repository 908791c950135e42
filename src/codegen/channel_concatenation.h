// A kernel that concatenates 4-d float32 images along their channels, its
// parts read straight from its parameters, with only element-wise work
// between the concatenation and the result (DenseNet's batch norm and ReLU
// of the joined features): its parts may keep the layout of the primitives
// that write them (channels last or channel blocks), each part copied into
// its channels of the result, so no conversion to dense and back is needed.
// PlanLayouts asks whether a kernel is one; code generation writes it.
#pragma once

#include <optional>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

struct CpuKernel;
namespace kernel_ir {
struct Kernel;
}

struct ChannelConcatenation {
  const CallNode* concatenate = nullptr;
  std::vector<int> part_params;  // the parameter of each part, in order
};

// The channel concatenation `fn` is, if it is one: its body is a
// concatenation along axis 1 of distinct 4-d float32 parameters that
// nothing else reads, under element-wise and broadcast operators of the
// result's shape whose other operands are not of that shape (each read by
// its coordinates). Nullopt otherwise.
std::optional<ChannelConcatenation> channel_concatenation(const FunctionNode& fn);

// Appends to `kernel` the loops of `k`, a channel concatenation `c` whose
// parts and result share the layout k.layout (channels last, or channel
// blocks dividing every part's channels): a parallel loop per part over its
// rows, parts of equal channels sharing one function.
void lower_channel_concatenation(const CpuKernel& k, const ChannelConcatenation& c, kernel_ir::Kernel& kernel);

}  // namespace switchyard
