// The PlanDevices pass: build the placement problem, solve it, write it back.
#include "placement/plan_devices.h"

#include "placement/placement_rewrite.h"
#include "placement/target_support.h"
#include "support/error.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

const std::string* op_name_of(const PlaceNode& n) {
  const CallNode* call = as<CallNode>(n.node);
  const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
  return op ? &op->name : nullptr;
}

// Wishes that put an operator where its target cannot run it are errors.
void check_fixed_support(const PlacementGraph& g) {
  for (const PlaceNode& n : g.nodes) {
    const std::string* op = op_name_of(n);
    if (op && n.fixed && !target_can_run(n.fixed->target(), *op))
      throw Error(ErrorKind::kPlacement,
                  "'" + *op + "' is wished onto " + n.fixed->device_name() + ", whose target '" +
                      n.fixed->target()->str() + "' cannot run it (" + n.reason.text + ")",
                  n.node->span());
  }
}

// Free operators placed where their target cannot run them move to the
// host; returns whether any moved.
bool fall_back_to_host(PlacementGraph* g, const PlacementSolution& s, const CompilationConfig& config,
                       std::vector<std::string>* warnings) {
  bool moved = false;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    PlaceNode& n = g->nodes[i];
    const std::string* op = op_name_of(n);
    if (!op || n.fixed || target_can_run(s.device[i]->target(), *op)) continue;
    std::string text = "'" + *op + "' cannot run on " + s.device[i]->device_name() + " (target '" +
                       s.device[i]->target()->str() + "'): it falls back to the host " +
                       config.host_device->device_name();
    warnings->push_back(render_diagnostic(n.node->span(), "warning", text));
    n.fixed = config.host_device;
    n.reason = PlacementReason{PlacementReason::Kind::kFallback, text, n.node->span(), -1};
    moved = true;
  }
  return moved;
}

}  // namespace

PlanResult plan_devices(const IRModule& mod, const CompilationConfig& config,
                        const std::optional<LatencyObjective>& latency) {
  PlanResult result;
  result.graph = build_placement_graph(mod, config);
  check_fixed_support(result.graph);
  if (latency) result.latency = latency_costs(result.graph, config, *latency->costs, latency->path);
  const LatencyCosts* costs = result.latency ? &*result.latency : nullptr;
  result.solution = solve_placement(result.graph, config, costs);
  // Each round fixes at least one more node, so this ends.
  while (fall_back_to_host(&result.graph, result.solution, config, &result.warnings))
    result.solution = solve_placement(result.graph, config, costs);
  result.module = infer_type(rewrite_placement(mod, result.graph, result.solution, config));
  return result;
}

const PassInfo& plan_devices_info() {
  static const PassInfo info{"PlanDevices", 0, {"InferType"}};
  return info;
}

Pass PlanDevices(const CompilationConfig& config, std::vector<PlacementRule> rules,
                 std::optional<LatencyObjective> latency) {
  return make_module_pass(plan_devices_info(), [config, rules, latency](const IRModule& mod, const PassContext& ctx) {
    PlanResult plan = plan_devices(apply_placement_rules(mod, rules).module, config, latency);
    for (const std::string& warning : plan.warnings) ctx.diagnostics->report({plan_devices_info().name, warning});
    return plan.module;
  });
}

}  // namespace switchyard
