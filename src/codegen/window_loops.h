// Convolution and pooling as generated loops (window_loops.cc): the
// statements direct_anchor.cc's kernel runs for nn.conv2d (NCHW data, OIHW
// weights) and the NCHW pools.
#pragma once

#include "codegen/group_kernel.h"
#include "kernel_ir/stmt.h"

namespace switchyard {

// The parallel loop computing k's nn.conv2d and storing it through the epilogue.
kernel_ir::Stmt convolution_loops(const CpuKernel& k);
// The same for nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d.
kernel_ir::Stmt pool_loops(const CpuKernel& k);

}  // namespace switchyard
