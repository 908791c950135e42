// Passes by name for the command line and Python: the pipeline's
// (pipeline/pass_table.h) and the backend's own, PlanLayouts, which asks
// the CPU code generator which kernels are oneDNN primitives.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pass_table.h"

namespace switchyard {

// As pass_by_name, knowing PlanLayouts too (for this process's oneDNN).
Pass compiler_pass_by_name(const std::string& name, const PipelineOptions& options);
// Sorted.
std::vector<std::string> compiler_pass_names();

}  // namespace switchyard
