// Registration functions of the built-in operator groups (one per file).
#pragma once

namespace switchyard {

void register_placement_ops();    // op/placement_ops.cc
void register_elementwise_ops();  // op/elementwise_ops.cc

}  // namespace switchyard
