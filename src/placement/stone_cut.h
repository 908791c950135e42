// Stone's two-processor assignment (H. S. Stone, 1977) for the latency
// objective: with the devices taking turns, a placement's run time is the
// sum of every step's compute on its device and every copy (one per value
// and destination), and the placement minimising that sum over two devices
// is one minimum s-t cut. When a program cannot overlap anything (each
// step reads its predecessor's result and nothing else, see
// runs_serially), this sum is the makespan and the cut its exact optimum at
// any size; otherwise it is one candidate the local search starts from.
#pragma once

#include <optional>
#include <vector>

#include "placement/latency_solver.h"
#include "placement/makespan.h"

namespace switchyard {

// The devices one after another: the sum of compute and copies of an
// assignment (device per step), never less than its makespan.
double serial_time(const ScheduleProblem& problem, const std::vector<int>& step_device);

// Whether every placement's makespan is its serial_time: each step after
// the first in program order reads a result of the step just before it, and
// every result is read only by the step just after its producer.
bool runs_serially(const ScheduleProblem& problem);

// The groups' devices, each on `a` or `b`, minimising serial_time; among
// equal sums the fewest free groups off `default_device`. Nothing when a
// group is pinned to another device or can run on neither.
std::optional<std::vector<int>> stone_cut(const ScheduleProblem& problem, const LatencyGroups& groups, int a, int b,
                                          int default_device);

}  // namespace switchyard
