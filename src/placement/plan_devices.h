// PlanDevices: from a few wishes to a fully placed program with the fewest
// bytes copied between devices (see placement_graph.h, placement_solver.h and
// placement_rewrite.h for the three steps).
#pragma once

#include <memory>
#include <optional>

#include "placement/cost_model.h"
#include "placement/latency_placement.h"
#include "placement/placement_graph.h"
#include "placement/placement_rules.h"
#include "placement/placement_solver.h"
#include "transform/pass.h"

namespace switchyard {

// `--objective latency`: the cost file (checked against this machine by
// whoever read it) and its path, for messages.
struct LatencyObjective {
  std::shared_ptr<const CostFile> costs;
  std::string path;
  // Set by a build that decided before planning (its cores follow the
  // decision): true puts every node on the all-cores device, false keeps
  // the split; unset: planning decides by the predictions.
  std::optional<bool> one_device;
};

struct PlanResult {
  IRModule module;             // placed
  PlacementGraph graph;        // over the input module's nodes
  PlacementSolution solution;  // per place node of `graph`
  // Operators moved to the host because their device's target cannot run
  // them, one rendered warning each (naming the node and span).
  std::vector<std::string> warnings;
  // With the latency objective: every node's time per device (the chosen
  // candidate's: every core's times on the all-cores device when it won).
  std::optional<LatencyCosts> latency;
  // With the latency objective: the candidates' predictions and the choice.
  std::optional<LatencyChoice> choice;
};

// Plans a typed module. Throws Error(kPlacement) on contradicting wishes
// (naming every span involved and the path between them), devices missing
// from the config, or an operator wished onto a device whose target cannot
// run it. A free operator planned onto such a device falls back to the host
// (a warning in PlanResult::warnings) and the rest is planned again.
// With `latency`, the placement minimises the predicted makespan instead of
// bytes (Error(kUsage) when the cost file lacks an operator or device), and
// is then compared with the whole model on one device with every core
// (the cost file's all-cores measurement): the faster prediction wins (a tie
// keeps the split, which honours the default device),
// unless `latency->one_device` has decided.
PlanResult plan_devices(const IRModule& mod, const CompilationConfig& config,
                        const std::optional<LatencyObjective>& latency = std::nullopt);

// The pass (requires InferType; types the result again). Rules are applied
// to the module first. Each fallback to the host is a warning in the pass
// context's diagnostics.
Pass PlanDevices(const CompilationConfig& config, std::vector<PlacementRule> rules = {},
                 std::optional<LatencyObjective> latency = std::nullopt);
// Its name, opt level and requirements, known before a config is at hand
// (for the pass table).
const PassInfo& plan_devices_info();

}  // namespace switchyard
