// The exact minimum makespan (the latency solver's objective, LatencyScore)
// by depth-first branch and bound, for models with too many free groups to
// try every combination. Free groups take a device each in the program
// order of their first step, the simulator (makespan.h) advancing step by
// step; the device that would finish that step soonest is tried first. A
// partial placement is dropped when a lower bound on every completion of it
// cannot beat the best placement found so far, the larger of:
//  - work: each device still runs the steps of the groups already placed on
//    it, after its queue's current end, and the free groups' steps run
//    somewhere at their cheapest: the largest device, and the average;
//  - paths: on each device it may take, a step not yet placed starts no
//    sooner than that queue ends and its inputs can be there (done on that
//    device, or done elsewhere and copied), its unplaced inputs at their
//    soonest on any device; it ends its time there later.
// Groups off the default device only grow in number as groups are placed,
// so the objective's second key prunes too.
#pragma once

#include <vector>

#include "placement/latency_solver.h"
#include "placement/makespan.h"

namespace switchyard {

struct BoundedSearch {
  std::vector<int> group_device;  // the best placement found: the incumbent when nothing beat it
  LatencyScore score;
  bool complete = false;  // every partial placement was searched or pruned: `score` is the optimum
  long nodes = 0;         // partial placements visited
};

// `incumbent` is a full placement (per group) that respects pinned groups and
// allowed devices; the search stops, incomplete, after `node_limit` nodes.
BoundedSearch branch_and_bound(const ScheduleProblem& problem, const LatencyGroups& groups, int default_device,
                               const std::vector<int>& incumbent, long node_limit);

}  // namespace switchyard
