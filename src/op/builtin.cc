// The list of built-in operator groups, registered once on first registry use.
#include "op/builtin_ops.h"
#include "op/registry.h"

namespace switchyard {

void register_builtin_ops() {
  register_placement_ops();
  register_elementwise_ops();
  register_nn_ops();
  register_window_ops();
  register_quantized_ops();
  register_reduce_ops();
  register_transform_ops();
  register_scan_ops();
}

}  // namespace switchyard
