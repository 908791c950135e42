// Placement for the shortest predicted makespan (makespan.h). The decision
// units are groups of steps that must share a device (tied place nodes);
// pinned groups never move and a group only goes where every step of it can
// run. Candidates: the given starting points (the bytes optimum), each
// device alone, Stone's minimum cut between the default device and each
// other (stone_cut.h: exact when nothing can overlap, as in a chain of
// steps, on two devices at any size), and a greedy earliest-finish schedule in program order;
// each is improved by local search with a share of the budget, and the
// best result kept: moving one group, or the run of
// groups on one device along the critical path (a branch), to another
// device, keeping a move that shortens the makespan. When every combination
// of the free groups' devices is at most `exhaustive_limit`, all are tried
// instead (while that many simulations stay cheap: combinations x size
// <= 4e7): the result is then the exact optimum of the model. Beyond that,
// a branch and bound (branch_and_bound.h) starts from local search's best
// and, when it ends within its budget, proves it optimal or improves on it.
// Ties: the placement with fewer groups off the default device.
#pragma once

#include <string>
#include <vector>

#include "placement/makespan.h"

namespace switchyard {

struct LatencyGroups {
  std::vector<int> group_of_step;
  std::vector<int> fixed;                  // per group: its device, or -1
  std::vector<std::vector<char>> allowed;  // per group and device: every step of it can run there
  int num_groups() const { return int(fixed.size()); }
};

// The objective, in order: the makespan (equal within 1e-9 of it), then
// fewer free groups off the default device.
struct LatencyScore {
  double makespan = 0;
  int off_default = 0;
  bool better_than(const LatencyScore& other) const;
};

struct LatencyOptions {
  int default_device = 0;
  long exhaustive_limit = 4096;
  // Branch and bound visits at most this many partial placements (0: a
  // budget of 1e7 / problem size, as local search; negative: none).
  long bound_node_limit = 0;
  // Local search stops after this many simulations of the whole program
  // (0: a budget of 1e7 / problem size, at least 200, so large graphs stay fast).
  long max_evaluations = 0;
};

struct LatencyPlan {
  std::vector<int> group_device;  // per group
  std::vector<int> step_device;   // per step
  double makespan = 0;
  bool exact = false;             // proven optimal: every combination, Stone's cut on a serial program, or branch and bound
  long evaluations = 0;
  std::string method;             // how it was found, for reports: "optimal: all 64 placements tried"
};

// Throws std::invalid_argument when a group has no allowed device or a
// fixed group's device is not allowed (the caller names the node first).
LatencyPlan minimise_makespan(const ScheduleProblem& problem, const LatencyGroups& groups,
                              const std::vector<std::vector<int>>& starts, const LatencyOptions& options);

}  // namespace switchyard
