// The PlanDevices pass: build the placement problem, solve it, write it back.
#include "placement/plan_devices.h"

#include <cstdio>

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

std::string node_text(const PlaceNode& n) {
  return n.what + (n.node && n.node->span().defined() ? " (" + n.node->span().to_string() + ")" : "");
}


// The split (the solution as planned) against every node on the all-cores
// device; moves the solution there when that wins (or was decided).
LatencyChoice choose_candidate(const PlanResult& plan, const CompilationConfig& config, const LatencyObjective& objective,
                               PlacementSolution* solution) {
  const LatencyCosts& costs = *plan.latency;
  LatencyChoice choice;
  choice.split_ms = predict_times(plan.graph, config, costs, solution->device).makespan_ms;
  choice.split_search = solution->search;
  choice.handoffs = placement_cost(plan.graph, solution->device).second;
  const int d = costs.all_cores_device;
  if (d < 0) {
    choice.unavailable = objective.costs->all_cores
                             ? "the cost file measured it on " + objective.costs->all_cores->device + ", not a device of the build"
                             : "the cost file has no all-cores measurement";
  } else {
    const VirtualDevice* device = config.devices[size_t(d)];
    choice.device = device->device_name();
    choice.threads = costs.all_cores_threads;
    for (const PlaceNode& n : plan.graph.nodes)
      if (n.fixed && n.fixed != device && choice.unavailable.empty())
        choice.unavailable = node_text(n) + " is pinned on " + n.fixed->device_name() + " (" + n.reason.text + ")";
    for (size_t i = 0; i < plan.graph.nodes.size() && choice.unavailable.empty(); ++i)
      if (costs.all_cores_compute[i] == kCannotRun)
        choice.unavailable = node_text(plan.graph.nodes[i]) + " cannot run on " + choice.device;
    if (choice.unavailable.empty()) {
      LatencyCosts every_core = all_cores_costs(costs);
      std::vector<const VirtualDevice*> all_here(plan.graph.nodes.size(), device);
      choice.one_device_ms = predict_times(plan.graph, config, every_core, all_here).makespan_ms;
    }
  }
  if (objective.one_device && *objective.one_device && choice.one_device_ms < 0)
    throw Error(ErrorKind::kPlacement, "--objective latency chose one device with every core, but " + choice.unavailable);
  choice.one_device = objective.one_device ? *objective.one_device
                                           : choice.one_device_ms >= 0 && choice.one_device_ms < choice.split_ms;
  if (choice.one_device) {
    const VirtualDevice* device = config.devices[size_t(d)];
    const std::string why = "one device with every core (" + choice.device + ", " + std::to_string(choice.threads) +
                            " threads) is predicted to run the model in " + ms_text(choice.one_device_ms) + ", the split in " +
                            ms_text(choice.split_ms);
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i) {
      solution->device[i] = device;
      if (!plan.graph.nodes[i].fixed) solution->reason[i] = PlacementReason{PlacementReason::Kind::kOptimizer, why, Span(), -1};
    }
    solution->bytes_copied = solution->copies = 0;
    solution->predicted_ms = choice.one_device_ms;
  }
  return choice;
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
  if (latency) {
    result.choice = choose_candidate(result, config, *latency, &result.solution);
    if (result.choice->one_device) result.latency = all_cores_costs(*result.latency);
  }
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
