// The latency objective over a placement graph: each place node is a step
// of the schedule (makespan.h), producers before consumers; its time per
// device comes from a cost file.
#pragma once

#include <string>
#include <vector>

#include "placement/cost_model.h"
#include "placement/makespan.h"
#include "placement/placement_graph.h"

namespace switchyard {

struct LatencyCosts {
  std::vector<std::vector<double>> compute;  // per place node and config device (ms); kCannotRun where its target cannot
  std::vector<std::vector<CopyCost>> copy;   // per config device pair
};

// Times for every place node from the cost file; Error(kUsage) listing every
// operator without a cost on some device (with its span) and every device or
// device pair the file lacks. Nodes other than operator calls cost nothing.
LatencyCosts latency_costs(const PlacementGraph& graph, const CompilationConfig& config, const CostFile& costs,
                           const std::string& path);

ScheduleProblem schedule_problem(const PlacementGraph& graph, const LatencyCosts& costs);

struct PredictedTimes {
  double makespan_ms = 0;
  std::vector<double> compute_ms, copy_ms;  // per config device
  std::vector<PlaceId> critical_path;
};
PredictedTimes predict_times(const PlacementGraph& graph, const CompilationConfig& config, const LatencyCosts& costs,
                             const std::vector<const VirtualDevice*>& device);
// "predicted run time 4.100 ms\n  cpu:0: compute 3.000 ms, copies into it 0.100 ms\n ...
//  critical path: nn.dense (f.sy:3:7) -> ..." (long paths elided in the middle).
std::string predicted_times_text(const PredictedTimes& times, const PlacementGraph& graph,
                                 const CompilationConfig& config);

}  // namespace switchyard
