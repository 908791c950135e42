// The static memory planner on hand-made liveness problems.
#include "backend/memory_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace switchyard {
namespace {

PlannedTensor tensor(uint64_t bytes, int first, int last, std::vector<int> in_place = {}, int arena = 0) {
  PlannedTensor t;
  t.arena = arena;
  t.bytes = bytes;
  t.first_step = first;
  t.last_step = last;
  t.in_place_candidates = std::move(in_place);
  return t;
}

MemoryProblem one_arena(std::vector<PlannedTensor> tensors) {
  return MemoryProblem{{ArenaKey{0, "global"}}, std::move(tensors)};
}

bool overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

// Every pair of tensors live at the same step in one arena occupies disjoint
// bytes, except a tensor and the one it took over, at the handover step.
void expect_valid(const MemoryProblem& problem, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), problem.tensors.size());
  for (size_t i = 0; i < problem.tensors.size(); ++i) {
    const PlannedTensor& a = problem.tensors[i];
    uint64_t a_bytes = align_to_arena(a.bytes);
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << "tensor " << i;
    EXPECT_LE(plan.offsets[i] + a_bytes, plan.arenas[size_t(a.arena)].bytes) << "tensor " << i;
    for (size_t j = i + 1; j < problem.tensors.size(); ++j) {
      const PlannedTensor& b = problem.tensors[j];
      if (a.arena != b.arena || a_bytes == 0 || b.bytes == 0) continue;
      bool live_together = a.first_step <= b.last_step && b.first_step <= a.last_step;
      bool handover = plan.shares_with[j] == int(i) || plan.shares_with[i] == int(j);
      if (live_together && !handover) {
        EXPECT_FALSE(overlap(plan.offsets[i], a_bytes, plan.offsets[j], align_to_arena(b.bytes)))
            << "tensors " << i << " and " << j << " are live together but overlap";
      }
    }
  }
  for (const ArenaPlan& arena : plan.arenas) {
    EXPECT_GE(arena.bytes, arena.lower_bound_bytes);
    EXPECT_EQ(arena.bytes % kArenaAlignment, 0u);
  }
}

TEST(MemoryPlan, ChainReusesTheSpaceOfDeadTensors) {
  // a -> b -> c -> d: at most two live at once, so two blocks suffice.
  MemoryProblem problem = one_arena({tensor(256, 0, 1), tensor(256, 1, 2), tensor(256, 2, 3), tensor(256, 3, 3)});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.arenas[0].bytes, 512u);
  EXPECT_EQ(plan.arenas[0].lower_bound_bytes, 512u);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
}

TEST(MemoryPlan, InPlaceTakesOverAnInputThatDiesAtTheStep) {
  MemoryProblem problem = one_arena({tensor(256, 0, 1), tensor(256, 1, 2, {0}), tensor(256, 2, 3, {1})});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.shares_with[1], 0);
  EXPECT_EQ(plan.shares_with[2], 1);
  EXPECT_EQ(plan.arenas[0].bytes, 256u);
  EXPECT_EQ(plan.arenas[0].lower_bound_bytes, 256u);
}

TEST(MemoryPlan, InPlaceIsRefusedWhenTheInputLivesOnOrDiffersInSizeOrArena) {
  MemoryProblem problem{{ArenaKey{0, "global"}, ArenaKey{1, "global"}},
                        {tensor(256, 0, 3),              // 0: read again at step 3
                         tensor(256, 1, 4, {0}),         // 1: cannot take 0 (still live)
                         tensor(128, 0, 2),              // 2: dies at 2, but smaller
                         tensor(256, 2, 4, {2}),         // 3: cannot take 2 (size)
                         tensor(256, 0, 2, {}, 1),       // 4: other arena
                         tensor(256, 2, 4, {4})}};       // 5: cannot take 4 (arena)
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  for (int s : plan.shares_with) EXPECT_EQ(s, -1);
}

TEST(MemoryPlan, OneInputIsTakenOverByOneOutputOnly) {
  MemoryProblem problem = one_arena({tensor(64, 0, 1), tensor(64, 1, 2, {0}), tensor(64, 1, 2, {0})});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.shares_with[1], 0);
  EXPECT_EQ(plan.shares_with[2], -1);
  EXPECT_NE(plan.offsets[1], plan.offsets[2]);
}

TEST(MemoryPlan, OutputsOfOneStepNeverOverlapItsInputs) {
  // Step 1 reads tensor 0 (dying there) and writes tensor 1 without in-place.
  MemoryProblem problem = one_arena({tensor(64, 0, 1), tensor(64, 1, 2)});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.arenas[0].bytes, 128u);
}

TEST(MemoryPlan, SizesAndOffsetsAreAligned) {
  MemoryProblem problem = one_arena({tensor(1, 0, 1), tensor(65, 0, 1), tensor(3, 0, 1)});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.arenas[0].bytes, 64u + 128u + 64u);
  EXPECT_EQ(plan.arenas[0].lower_bound_bytes, 256u);
}

TEST(MemoryPlan, BestFitPicksTheSmallestFreeBlock) {
  // Free at step 2: a 512-byte block (tensor 0) and a 128-byte block (tensor 2).
  MemoryProblem problem = one_arena({tensor(512, 0, 1), tensor(64, 0, 5), tensor(128, 0, 1), tensor(64, 0, 5),
                                     tensor(128, 2, 3)});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.offsets[4], plan.offsets[2]);
}

TEST(MemoryPlan, GrowsFromAFreeBlockAtTheEnd) {
  // After step 0 the arena is [t0: 64][t1: 64 free]; a 192-byte tensor grows
  // the arena from the free block at its end instead of past it.
  MemoryProblem problem = one_arena({tensor(64, 0, 3), tensor(64, 0, 0), tensor(192, 1, 2)});
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.offsets[2], 64u);
  EXPECT_EQ(plan.arenas[0].bytes, 256u);
}

TEST(MemoryPlan, ArenasAreSeparatePerDeviceAndScope) {
  MemoryProblem problem{{ArenaKey{0, "global"}, ArenaKey{1, "global"}, ArenaKey{1, "shared"}},
                        {tensor(64, 0, 1, {}, 0), tensor(128, 0, 1, {}, 1), tensor(256, 0, 1, {}, 2),
                         tensor(64, 0, 1, {}, 1)}};
  MemoryPlan plan = plan_memory(problem);
  expect_valid(problem, plan);
  EXPECT_EQ(plan.planned_bytes(0), 64u);
  EXPECT_EQ(plan.planned_bytes(1), 128u + 64u + 256u);
  EXPECT_EQ(plan.lower_bound_bytes(1), 448u);
  EXPECT_EQ(plan.arenas[2].key.scope, "shared");
  EXPECT_EQ(plan.offsets[2], 0u);
}

TEST(MemoryPlan, EmptyTensorsTakeNoSpace) {
  MemoryProblem problem = one_arena({tensor(0, 0, 2), tensor(64, 1, 2)});
  MemoryPlan plan = plan_memory(problem);
  EXPECT_EQ(plan.arenas[0].bytes, 64u);
}

TEST(MemoryPlan, MalformedProblemsAreRejected) {
  EXPECT_THROW(plan_memory(one_arena({tensor(64, 2, 1)})), std::invalid_argument);
  EXPECT_THROW(plan_memory(one_arena({tensor(64, 0, 1, {}, 3)})), std::invalid_argument);
  EXPECT_THROW(plan_memory(one_arena({tensor(64, 0, 1, {7})})), std::invalid_argument);
}

TEST(MemoryPlan, RandomProblemsArePlacedValidlyAndNearTheLowerBound) {
  std::mt19937 rng(1234);
  uint64_t total_planned = 0, total_bound = 0;
  for (int trial = 0; trial < 200; ++trial) {
    MemoryProblem problem{{ArenaKey{0, "global"}, ArenaKey{1, "global"}}, {}};
    int count = 1 + int(rng() % 40);
    for (int i = 0; i < count; ++i) {
      int first = int(rng() % 30);
      int last = first + int(rng() % 6);
      uint64_t bytes = 1 + rng() % 1000;
      std::vector<int> candidates;
      if (i > 0 && rng() % 3 == 0) candidates.push_back(int(rng() % uint32_t(i)));
      problem.tensors.push_back(tensor(bytes, first, last, candidates, int(rng() % 2)));
    }
    MemoryPlan plan = plan_memory(problem);
    expect_valid(problem, plan);
    for (const ArenaPlan& arena : plan.arenas) {
      total_planned += arena.bytes;
      total_bound += arena.lower_bound_bytes;
    }
  }
  // Best fit stays within a modest factor of the bound on these problems.
  EXPECT_LE(double(total_planned), 1.5 * double(total_bound));
}

}  // namespace
}  // namespace switchyard
