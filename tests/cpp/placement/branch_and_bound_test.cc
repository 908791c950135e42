// Branch and bound for the latency objective: the brute-force optimum on
// graphs too large for the solver's exhaustive search, the objective's
// tie-break, and an honest "incomplete" when its budget runs out.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "placement/branch_and_bound.h"
#include "placement/latency_solver.h"
#include "placement/stone_cut.h"
#include "schedule_problems.h"

namespace switchyard {
namespace makespan_test {

namespace {

// Every free group on the default device, pinned groups on theirs.
std::vector<int> on_default(const LatencyGroups& g, int default_device) {
  std::vector<int> out;
  for (int group = 0; group < g.num_groups(); ++group)
    out.push_back(g.fixed[size_t(group)] >= 0 ? g.fixed[size_t(group)] : default_device);
  return out;
}

std::vector<int> step_devices(const ScheduleProblem& p, const LatencyGroups& g, const std::vector<int>& group_device) {
  std::vector<int> out;
  for (int s = 0; s < p.num_steps(); ++s) out.push_back(group_device[size_t(g.group_of_step[size_t(s)])]);
  return out;
}

}  // namespace

// From the weakest incumbent (all on one device) to the brute-force optimum.
TEST(BranchAndBound, FindsTheBruteForceOptimumFromAnyIncumbent) {
  std::mt19937 rng(31);
  long nodes = 0;
  for (int trial = 0; trial < 200; ++trial) {
    LatencyGroups g;
    ScheduleProblem p = random_problem(rng, &g, 14);
    BoundedSearch found = branch_and_bound(p, g, 0, on_default(g, 0), 1'000'000);
    ASSERT_TRUE(found.complete) << "trial " << trial;
    const double optimum = brute_force(p, g);
    EXPECT_NEAR(found.score.makespan, optimum, 1e-9) << "trial " << trial;
    EXPECT_NEAR(simulate_makespan(p, step_devices(p, g, found.group_device)), found.score.makespan, 1e-12);
    for (int group = 0; group < g.num_groups(); ++group) {
      if (g.fixed[size_t(group)] < 0) continue;
      EXPECT_EQ(found.group_device[size_t(group)], g.fixed[size_t(group)]);
    }
    nodes += found.nodes;
  }
  // Brute force simulates up to 2^14 placements a graph; the bounds cut that down.
  std::printf("branch and bound: %ld partial placements over 200 graphs of up to 14 steps\n", nodes);
}

// On graphs past the exhaustive limit (4096 combinations) the solver's
// result is proven optimal by branch and bound, and says so.
TEST(BranchAndBound, MakesTheSolverExactBeyondExhaustiveSearch) {
  std::mt19937 rng(37);
  int proven = 0;
  for (int trial = 0; trial < 60; ++trial) {
    LatencyGroups g;
    ScheduleProblem p = random_problem(rng, &g, 20);
    // Exhaustive search (4096 combinations: 12 free groups) or Stone's cut would answer.
    const long free = std::count(g.fixed.begin(), g.fixed.end(), -1);
    if (free <= 12 || runs_serially(p)) continue;
    LatencyPlan plan = minimise_makespan(p, g, {}, {});
    ASSERT_TRUE(plan.exact) << plan.method;
    EXPECT_TRUE(plan.method.starts_with("optimal: branch and bound over ")) << plan.method;
    EXPECT_NEAR(plan.makespan, brute_force(p, g), 1e-9) << "trial " << trial;
    ++proven;
  }
  EXPECT_GE(proven, 10);
}

// Equal makespans: the placement with fewer groups off the default device,
// as exhaustive search chooses.
TEST(BranchAndBound, TiesGoToFewerGroupsOffTheDefaultDevice) {
  ScheduleProblem p = problem(2, {1, 1, 1, 1});  // a chain: every device alike, copies only cost
  for (int s = 1; s < 4; ++s) read(p, s, s - 1);
  for (int default_device : {0, 1}) {
    std::vector<int> everything_elsewhere(4, 1 - default_device);  // the same makespan's worst tie
    BoundedSearch found = branch_and_bound(p, free_groups(p), default_device, everything_elsewhere, 1000);
    ASSERT_TRUE(found.complete);
    EXPECT_EQ(found.group_device, std::vector<int>(4, default_device));
    EXPECT_DOUBLE_EQ(found.score.makespan, 4);
    EXPECT_EQ(found.score.off_default, 0);
  }
}

// Out of budget: not complete, and the incumbent is kept unless beaten.
TEST(BranchAndBound, AnExhaustedBudgetIsReportedNotTakenForAProof) {
  std::mt19937 rng(41);
  LatencyGroups g;
  ScheduleProblem p;
  do p = random_problem(rng, &g, 14);
  while (p.num_steps() < 12 || runs_serially(p));
  std::vector<int> incumbent = on_default(g, 0);
  BoundedSearch found = branch_and_bound(p, g, 0, incumbent, 3);
  EXPECT_FALSE(found.complete);
  EXPECT_LE(found.score.makespan, simulate_makespan(p, step_devices(p, g, incumbent)) + 1e-12);
  EXPECT_NEAR(simulate_makespan(p, step_devices(p, g, found.group_device)), found.score.makespan, 1e-12);
  // With a budget that cannot make a proof, the solver says it is not proven.
  LatencyPlan plan = minimise_makespan(p, g, {}, {.default_device = 0, .exhaustive_limit = 0, .bound_node_limit = 1});
  EXPECT_FALSE(plan.exact);
  EXPECT_TRUE(plan.method.ends_with(", not proven optimal")) << plan.method;
}

// Tied groups and a device that cannot run some steps, on three devices,
// readers giving one value different sizes (the simulator copies the first
// reader's): the same optimum as trying every combination.
TEST(BranchAndBound, GroupsUnsupportedDevicesAndThreeDevicesMatchExhaustiveSearch) {
  std::mt19937 rng(43);
  std::uniform_real_distribution<double> time(0.1, 5);
  for (int trial = 0; trial < 300; ++trial) {
    const int steps = 4 + int(rng() % 9), groups = std::max(2, steps * 2 / 3);
    ScheduleProblem p = problem(3, std::vector<double>(size_t(steps), 0), 0.05 * double(rng() % 10), 0.001);
    for (auto& on_device : p.compute)
      for (double& t : on_device) t = time(rng);
    for (int s = 1; s < steps; ++s)
      for (int r = 0; r < 1 + int(rng() % 2); ++r) read(p, s, int(rng() % unsigned(s)), int64_t(rng() % 2000));
    LatencyGroups g;
    g.fixed.assign(size_t(groups), -1);
    g.allowed.assign(size_t(groups), {1, 1, 1});
    for (int s = 0; s < steps; ++s) g.group_of_step.push_back(int(rng() % unsigned(groups)));
    const int unsupported = int(rng() % unsigned(steps));
    p.compute[size_t(unsupported)][2] = kCannotRun;
    g.allowed[size_t(g.group_of_step[size_t(unsupported)])][2] = 0;
    g.fixed[size_t(rng() % unsigned(groups))] = int(rng() % 2);
    LatencyPlan exhaustive = minimise_makespan(p, g, {}, {.default_device = 0, .exhaustive_limit = 1'000'000});
    ASSERT_TRUE(exhaustive.method.starts_with("optimal: all ")) << exhaustive.method;
    BoundedSearch found = branch_and_bound(p, g, 0, on_default(g, 0), 1'000'000);
    ASSERT_TRUE(found.complete);
    EXPECT_NEAR(found.score.makespan, exhaustive.makespan, 1e-9) << "trial " << trial;
    int off_default = 0;  // ties broken alike: as few groups off the default device
    for (int group = 0; group < groups; ++group)
      off_default += g.fixed[size_t(group)] < 0 && exhaustive.group_device[size_t(group)] != 0;
    EXPECT_EQ(found.score.off_default, off_default) << "trial " << trial;
  }
}

}  // namespace makespan_test
}  // namespace switchyard
