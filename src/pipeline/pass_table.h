// Passes by name, for `switchyard opt -p A,B` and the Python API, and the
// default optimisation pipeline (written out in build.cc, beside the rest of
// the compiler's pipeline).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/compilation_config.h"
#include "placement/placement_rules.h"
#include "placement/plan_devices.h"
#include "transform/pass.h"

namespace switchyard {

struct PipelineOptions {
  std::optional<CompilationConfig> config;  // needed by PlanDevices
  std::vector<PlacementRule> rules;         // applied by PlanDevices
  std::optional<LatencyObjective> latency;  // PlanDevices' objective, when not bytes
};

// Error(kPass) "unknown pass 'X' (known: ...)" for an unknown name;
// Error(kUsage) for PlanDevices without options.config. Knows PlanLayouts
// (with no layout pins) as well as the IR passes.
Pass pass_by_name(const std::string& name, const PipelineOptions& options);
// Sorted.
std::vector<std::string> pass_names();

// PlanDevices with the options' devices and rules; Error(kUsage) without devices.
Pass plan_devices_pass(const PipelineOptions& options);

// InferType, PlanDevices, ToGraphNormalForm, SimplifyExpr, FoldConstant,
// EliminateCommonSubexpr, DeadCodeElimination, FuseOps: the compiler's
// pipeline before lowering.
Pass default_pipeline(const PipelineOptions& options);

}  // namespace switchyard
