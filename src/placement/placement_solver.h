// Solving the placement problem: hard facts first (with conflicts reported
// by the spans involved and the path between them), then every free place
// node placed to move the fewest bytes: exactly, by one minimum cut, when two
// devices meet; by repeated two-device moves with more; by plain propagation
// when nothing needs to cross. Ties: fewer copies, then the default device.
// With latency costs, the bytes optimum is one starting point of the search
// for the shortest predicted makespan instead (latency_solver.h).
#pragma once

#include "placement/latency_placement.h"
#include "placement/placement_graph.h"

namespace switchyard {

struct PlacementSolution {
  std::vector<const VirtualDevice*> device;  // per place node
  std::vector<PlacementReason> reason;       // per place node
  int64_t bytes_copied = 0;
  int64_t copies = 0;
  double predicted_ms = -1;  // with latency costs: the predicted makespan
  std::string search;        // with latency costs: how the placement was found (LatencyPlan::method)
};

// With `latency`, minimises the predicted makespan; free nodes then go
// wherever the schedule is shortest, the default device only breaking ties.
PlacementSolution solve_placement(const PlacementGraph& graph, const CompilationConfig& config,
                                  const LatencyCosts* latency = nullptr);

// Bytes and copies an assignment costs (one copy per value and destination).
std::pair<int64_t, int64_t> placement_cost(const PlacementGraph& graph,
                                           const std::vector<const VirtualDevice*>& device);

}  // namespace switchyard
