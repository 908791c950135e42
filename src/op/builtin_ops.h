// Registration functions of the built-in operator groups (one per file).
#pragma once

namespace switchyard {

void register_placement_ops();    // op/placement_ops.cc
void register_elementwise_ops();  // op/elementwise_ops.cc
void register_nn_ops();           // op/nn_ops.cc
void register_window_ops();       // op/window_ops.cc
void register_quantized_ops();    // op/quantized_ops.cc
void register_reduce_ops();       // op/reduce_ops.cc
void register_transform_ops();    // op/transform_ops.cc
void register_scan_ops();         // op/scan_ops.cc

}  // namespace switchyard
