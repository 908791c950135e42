// Registration functions of the reference kernel groups, one per file.
#pragma once

namespace switchyard {

void register_elementwise_kernels();  // interp/kernels_elementwise.cc
void register_linear_kernels();       // interp/kernels_linear.cc
void register_conv_pool_kernels();    // interp/kernels_conv_pool.cc
void register_norm_kernels();         // interp/kernels_norm.cc
void register_reduce_kernels();       // interp/kernels_reduce.cc
void register_shape_kernels();        // interp/kernels_shape.cc

}  // namespace switchyard
