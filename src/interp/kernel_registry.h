// The interpreter's reference kernels, one table keyed by operator name.
// The operator registry (op/registry.h) knows nothing of evaluation; this
// table is the interpreter's half of each operator: written by hand, or
// derived from an element-wise operator's scalar meaning. on_device and
// device_copy have no kernel: they are placement bookkeeping, done by the
// interpreter itself (interp/evaluate.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "interp/value.h"
#include "ir/attrs.h"
#include "ir/expr.h"

namespace switchyard {

// Computes an operator call. `args` are the evaluated arguments (a tuple
// argument, as concatenate's, is a tuple Value); `attrs` are the call's
// normalized attributes. Returns the output tensors: exactly one, unless the
// kernel is registered with returns_tuple. Throws Error (kType for arguments
// that do not fit, kRuntime for arithmetic faults such as integer division
// by zero); the interpreter adds the operator name and the call's span.
using InterpKernel = std::function<std::vector<NDArray>(const std::vector<Value>& args, const AttrsNode& attrs)>;

struct InterpKernelDef {
  InterpKernel kernel;
  bool returns_tuple = false;  // the outputs form a tuple (split, nn.batch_norm)
};

// Adds a kernel; throws std::logic_error on a duplicate name.
void register_interp_kernel(const std::string& op_name, InterpKernelDef def);
// The same, keyed by the operator's handle (op/handles.h), as the built-in kernels are.
void register_interp_kernel(const OpNode* op, InterpKernelDef def);
// Null when the operator has no reference kernel.
const InterpKernelDef* find_interp_kernel(const std::string& op_name);
// Names of every operator with a kernel, sorted.
std::vector<std::string> interp_kernel_names();

}  // namespace switchyard
