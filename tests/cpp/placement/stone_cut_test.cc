// Stone's two-device cut: the least serial time over every placement
// (brute force on random graphs), the exact makespan optimum of a program
// that cannot overlap (a dynamic program over a long chain), and a
// candidate that never makes the latency solver worse.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "placement/latency_solver.h"
#include "placement/stone_cut.h"
#include "schedule_problems.h"

namespace switchyard {
namespace makespan_test {

TEST(StoneCut, SerialTimeCountsOneCopyPerValueAndDestination) {
  ScheduleProblem p = problem(2, {1, 2, 3, 4});
  read(p, 1, 0);
  read(p, 2, 0);
  read(p, 3, 2);
  // 0 on device 0, read by 1 and 2 on device 1: one copy of 0.1 + 100 * 0.001; 3 back on device 0: one more.
  EXPECT_DOUBLE_EQ(serial_time(p, {0, 1, 1, 0}), 10 + 0.2 + 0.2);
  EXPECT_DOUBLE_EQ(serial_time(p, {0, 0, 0, 0}), 10);
}

TEST(StoneCut, RunsSeriallyOnlyWhenNothingCanOverlap) {
  ScheduleProblem chain = problem(2, {1, 1, 1});
  read(chain, 1, 0);
  read(chain, 2, 1);
  EXPECT_TRUE(runs_serially(chain));
  ScheduleProblem skip = chain;  // a residual connection: 0's copy can overlap step 1
  read(skip, 2, 0);
  EXPECT_FALSE(runs_serially(skip));
  ScheduleProblem branch = problem(2, {1, 1, 1});
  read(branch, 1, 0);
  read(branch, 2, 0);
  EXPECT_FALSE(runs_serially(branch));
}

TEST(StoneCut, MinimisesSerialTimeLikeBruteForce) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    LatencyGroups g;
    ScheduleProblem p = random_problem(rng, &g);
    for (int default_device : {0, 1}) {
      std::optional<std::vector<int>> cut = stone_cut(p, g, 0, 1, default_device);
      ASSERT_TRUE(cut.has_value());
      for (int s = 0; s < p.num_steps(); ++s) {
        if (g.fixed[size_t(s)] >= 0) {
          ASSERT_EQ((*cut)[size_t(s)], g.fixed[size_t(s)]);
        }
      }
      EXPECT_NEAR(serial_time(p, *cut), brute_force(p, g, serial_time), 1e-6) << "trial " << trial;
    }
  }
}

TEST(StoneCut, RefusesAGroupPinnedToAThirdDevice) {
  ScheduleProblem p = problem(3, {1, 1});
  read(p, 1, 0);
  LatencyGroups g = free_groups(p);
  g.fixed[1] = 2;
  EXPECT_FALSE(stone_cut(p, g, 0, 1, 0).has_value());
  EXPECT_TRUE(stone_cut(p, g, 0, 2, 0).has_value());
}

// A wish may pin a step where it cannot run (planning reports that
// first): the cut keeps it there and prices nothing infinite.
TEST(StoneCut, KeepsAPinnedStepWhereItCannotRun) {
  ScheduleProblem p = problem(2, {1, 2, 1});
  read(p, 1, 0);
  read(p, 2, 1);
  p.compute[1][1] = kCannotRun;
  LatencyGroups g = free_groups(p);
  g.fixed[1] = 1;
  std::optional<std::vector<int>> cut = stone_cut(p, g, 0, 1, 0);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(*cut, (std::vector<int>{1, 1, 1}));  // its neighbours join it rather than pay two copies
}

// A long chain whose steps are faster on one device or the other, with
// copies that make switching worth it only for long enough runs: solved
// exactly by the latency solver (no exhaustive search is possible at this
// size), checked against a dynamic program over the chain.
TEST(StoneCut, SolvesALongChainExactly) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> time(0.1, 2);
  const int steps = 10000;
  ScheduleProblem p = problem(2, std::vector<double>(steps, 0), 0.3, 0.0002);
  for (int s = 0; s < steps; ++s) {
    p.compute[size_t(s)] = {time(rng), time(rng)};
    if (s > 0) read(p, s, s - 1, int64_t(rng() % 5000));
  }
  ASSERT_TRUE(runs_serially(p));
  std::vector<double> best = p.compute[0];  // per device: the least time with step s there
  for (int s = 1; s < steps; ++s) {
    const double copy = p.copy[0][1].time(p.inputs[size_t(s)][0].bytes);
    std::vector<double> next(2);
    for (int d = 0; d < 2; ++d) next[size_t(d)] = std::min(best[size_t(d)], best[size_t(1 - d)] + copy) + p.compute[size_t(s)][size_t(d)];
    best = next;
  }
  const double optimum = std::min(best[0], best[1]);
  LatencyPlan plan = minimise_makespan(p, free_groups(p), {}, {});
  EXPECT_TRUE(plan.exact);
  EXPECT_EQ(plan.method, "optimal: nothing can overlap, so Stone's minimum cut is exact");
  EXPECT_NEAR(plan.makespan, optimum, 1e-6 * optimum);
  EXPECT_NEAR(simulate_makespan(p, plan.step_device), optimum, 1e-6 * optimum);
  // Both devices are used: the chain is not trivially one device's.
  EXPECT_NE(std::count(plan.step_device.begin(), plan.step_device.end(), 1), 0);
  EXPECT_NE(std::count(plan.step_device.begin(), plan.step_device.end(), 0), 0);
}

// With the cut among the candidates, the heuristic (no exhaustive search)
// is never worse than the cut's own placement.
TEST(StoneCut, HeuristicNeverWorseThanTheCut) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    LatencyGroups g;
    ScheduleProblem p = random_problem(rng, &g);
    LatencyPlan plan = minimise_makespan(p, g, {}, {.default_device = 0, .exhaustive_limit = 0});
    std::vector<int> cut = *stone_cut(p, g, 0, 1, 0);
    EXPECT_LE(plan.makespan, simulate_makespan(p, cut) + 1e-9) << "trial " << trial;
  }
}

}  // namespace makespan_test
}  // namespace switchyard
