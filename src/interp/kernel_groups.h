// Registration functions of the reference kernel groups, one per file.
#pragma once

#include "interp/kernel_registry.h"
#include "op/registry.h"

namespace switchyard {

// The kernel derived from an operator's scalar meaning (interp/kernels_elementwise.cc).
InterpKernelDef scalar_kernel(const OpDef& def);
void register_linear_kernels();       // interp/kernels_linear.cc
void register_conv_pool_kernels();    // interp/kernels_conv_pool.cc
void register_quantized_kernels();    // interp/kernels_quantized.cc
void register_norm_kernels();         // interp/kernels_norm.cc
void register_reduce_kernels();       // interp/kernels_reduce.cc
void register_shape_kernels();        // interp/kernels_shape.cc
void register_scan_kernels();         // interp/kernels_scan.cc

}  // namespace switchyard
