// The latency objective over a placement graph: each place node is a step
// of the schedule (makespan.h), producers before consumers; its time per
// device comes from a cost file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement/cost_model.h"
#include "placement/makespan.h"
#include "placement/placement_graph.h"

namespace switchyard {

struct LatencyCosts {
  std::vector<std::vector<double>> compute;  // per place node and config device (ms); kCannotRun where its target cannot
  // Per config device pair; the latency includes the hand-off between queues.
  std::vector<std::vector<CopyCost>> copy;
  std::vector<double> overhead_ms;  // per config device: a run's time outside its kernels
  double handoff_ms = 0;
  // The whole model on one device with every core, when the file measured
  // it on a device of the build: per place node its time there (ms).
  int all_cores_device = -1;  // config index
  int all_cores_threads = 0;
  double all_cores_overhead_ms = 0;
  std::vector<double> all_cores_compute;
};

// The same costs with the all-cores device's compute and overhead those of
// every core (the chosen candidate's costs, for predictions and explain).
LatencyCosts all_cores_costs(const LatencyCosts& costs);

// Times for every place node from the cost file; Error(kUsage) listing every
// operator without a cost on some device (with its span) and every device or
// device pair the file lacks. Nodes other than operator calls cost nothing.
LatencyCosts latency_costs(const PlacementGraph& graph, const CompilationConfig& config, const CostFile& costs,
                           const std::string& path);

ScheduleProblem schedule_problem(const PlacementGraph& graph, const LatencyCosts& costs);

struct PredictedTimes {
  double makespan_ms = 0;  // the schedule's, plus overhead_ms
  double overhead_ms = 0;  // the largest run overhead of the devices with work
  std::vector<double> compute_ms, copy_ms;  // per config device
  std::vector<PlaceId> critical_path;
};
PredictedTimes predict_times(const PlacementGraph& graph, const CompilationConfig& config, const LatencyCosts& costs,
                             const std::vector<const VirtualDevice*>& device);
// A time as reports print it: "4.100 ms".
std::string ms_text(double ms);
// The critical path's nodes, first to last: "nn.dense (f.sy:3:7)".
std::vector<std::string> critical_path_entries(const PredictedTimes& times, const PlacementGraph& graph);
// "  critical path: a -> b -> ... (40 more) -> z" (long paths elided in the middle).
std::string critical_path_text(const std::vector<std::string>& entries);
// The latency objective's two candidates: the placement of shortest
// predicted makespan over the build's devices (the split, which may use
// one device), and the whole model on one device with every core.
struct LatencyChoice {
  bool one_device = false;  // chose every node on `device`, with all the cores
  std::string device;
  int threads = 0;
  double split_ms = 0;         // predicted, overheads included
  double one_device_ms = -1;   // predicted; < 0: no such candidate (`unavailable` says why)
  int64_t handoffs = 0;        // values crossing devices in the split
  std::string split_search;    // how the split was found (PlacementSolution::search)
  std::string unavailable;
};
// "one device with every core: cpu:0 with 2 threads, predicted 16.1 ms, against 18.7 ms for the
// split over the build's devices (12 values crossing devices; optimal: all 64 placements tried):
// chose one device\n"
std::string latency_choice_text(const LatencyChoice& choice);

// "predicted run time 4.100 ms\n  cpu:0: compute 3.000 ms, copies into it 0.100 ms\n ...
//  critical path: nn.dense (f.sy:3:7) -> ...\n".
std::string predicted_times_text(const PredictedTimes& times, const PlacementGraph& graph,
                                 const CompilationConfig& config);

}  // namespace switchyard
