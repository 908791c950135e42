// The PlanDevices pass: build the placement problem, solve it, write it back.
#include "device/plan_devices.h"

#include "device/placement_rewrite.h"
#include "transform/infer_type.h"

namespace switchyard {

PlanResult plan_devices(const IRModule& mod, const CompilationConfig& config) {
  PlanResult result;
  result.graph = build_placement_graph(mod, config);
  result.solution = solve_placement(result.graph, config);
  result.module = infer_type(rewrite_placement(mod, result.graph, result.solution, config));
  return result;
}

Pass PlanDevices(const CompilationConfig& config, std::vector<PlacementRule> rules) {
  return make_module_pass({"PlanDevices", 0, {"InferType"}}, [config, rules](const IRModule& mod, const PassContext&) {
    return plan_devices(apply_placement_rules(mod, rules).module, config).module;
  });
}

}  // namespace switchyard
