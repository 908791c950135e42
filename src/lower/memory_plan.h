// Static memory planning: every intermediate tensor of a compiled program gets
// an offset in one arena per (device, memory scope), from its live range.
//
// The planner sees every live range at once. It first decides the in-place
// handovers (an element-wise kernel's output may take over an input that dies
// at that step, when both have the same size), then places tensors largest
// first, each in the smallest gap left by the tensors live alongside it. On
// the suite models that meets the lower bound (the most bytes live at one
// step). Entry inputs, outputs and weights are not planned here; they live in
// buffers the runtime owns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

// Every planned offset and arena size is a multiple of this.
constexpr uint64_t kArenaAlignment = 64;

// A device (index into the build's devices) and a memory scope.
struct ArenaKey {
  int device = 0;
  std::string scope = "global";
};

// One tensor to place.
struct PlannedTensor {
  int arena = 0;          // index into MemoryProblem::arenas
  uint64_t bytes = 0;
  int first_step = 0;     // the step that writes it first
  int last_step = 0;      // the last step that reads or writes it (>= first_step)
  // Tensors whose storage this one may take over in place (tried in order):
  // accepted when the candidate's last step is this tensor's first step and
  // both are in the same arena with the same aligned size.
  std::vector<int> in_place_candidates;
};

struct MemoryProblem {
  std::vector<ArenaKey> arenas;
  std::vector<PlannedTensor> tensors;
};

struct ArenaPlan {
  ArenaKey key;
  uint64_t bytes = 0;              // the arena's planned size
  // The most bytes live at once at any step (sizes aligned, in-place sharing
  // counted once): no placement of these live ranges can use less.
  uint64_t lower_bound_bytes = 0;
};

struct MemoryPlan {
  std::vector<ArenaPlan> arenas;  // in MemoryProblem::arenas order
  std::vector<uint64_t> offsets;  // per tensor, within its arena
  std::vector<int> shares_with;   // per tensor: the tensor whose storage it took in place, or -1

  // Totals over a device's arenas (all scopes).
  uint64_t planned_bytes(int device) const;
  uint64_t lower_bound_bytes(int device) const;
};

// `bytes` rounded up to kArenaAlignment.
uint64_t align_to_arena(uint64_t bytes);

// Plans every tensor. Throws std::invalid_argument on a malformed problem
// (an arena index out of range, last_step before first_step).
MemoryPlan plan_memory(const MemoryProblem& problem);

}  // namespace switchyard
