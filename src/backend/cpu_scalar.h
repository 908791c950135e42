// The C++ expression of one element-wise operator (a kernel IR ScalarCall)
// applied to operand expressions: the kernel IR's C++ renderer prints every
// operator call through it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "backend/cpu_code.h"
#include "kernel_ir/scalar_call.h"

namespace switchyard {

// The C++ expression of the operator applied to `values` (compute-typed
// operand expressions), adding any helper it needs to `helpers`.
std::string render_cpu_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                              std::set<CpuHelper>& helpers);

}  // namespace switchyard
