// Arena planning over whole live ranges: in-place handovers first, then
// greedy placement by size into the gaps left by the tensors live alongside.
#include "lower/memory_plan.h"

#include <algorithm>
#include <climits>
#include <numeric>
#include <stdexcept>

namespace switchyard {

namespace {

void validate(const MemoryProblem& problem) {
  for (size_t i = 0; i < problem.tensors.size(); ++i) {
    const PlannedTensor& t = problem.tensors[i];
    std::string name = "memory plan: tensor " + std::to_string(i);
    if (t.arena < 0 || size_t(t.arena) >= problem.arenas.size())
      throw std::invalid_argument(name + " names arena " + std::to_string(t.arena) + " of " +
                                  std::to_string(problem.arenas.size()));
    if (t.first_step < 0 || t.last_step < t.first_step)
      throw std::invalid_argument(name + " has live range [" + std::to_string(t.first_step) + ", " +
                                  std::to_string(t.last_step) + "]");
    for (int c : t.in_place_candidates)
      if (c < 0 || size_t(c) >= problem.tensors.size())
        throw std::invalid_argument(name + " names in-place candidate " + std::to_string(c));
  }
}

// Per tensor, the tensor whose storage it takes over (or -1): its first
// acceptable candidate, tensors taken in the order they are written. A
// handover depends on live ranges and sizes only, never on offsets.
std::vector<int> choose_handovers(const std::vector<PlannedTensor>& tensors, const std::vector<int>& written) {
  std::vector<int> shares_with(tensors.size(), -1);
  std::vector<bool> taken_over(tensors.size(), false);
  for (int i : written) {
    const PlannedTensor& t = tensors[size_t(i)];
    uint64_t bytes = align_to_arena(t.bytes);
    if (bytes == 0) continue;
    for (int c : t.in_place_candidates) {
      const PlannedTensor& source = tensors[size_t(c)];
      if (c != i && !taken_over[size_t(c)] && source.arena == t.arena && source.first_step < t.first_step &&
          source.last_step == t.first_step && align_to_arena(source.bytes) == bytes) {
        taken_over[size_t(c)] = true;
        shares_with[size_t(i)] = c;
        break;
      }
    }
  }
  return shares_with;
}

// What gets an offset: a tensor together with the chain of tensors that took
// it over in place, which all share its offset and size.
struct Block {
  uint64_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
};

// The placed blocks of one arena, to find those live at some step of a
// range: the blocks, in first-step order, are the leaves of a tree that keeps
// per subtree the latest last step among its placed blocks. A query visits
// only subtrees holding an answer, O((k + 1) log n) for k blocks found.
class PlacedBlocks {
 public:
  explicit PlacedBlocks(const std::vector<Block>& blocks) : blocks_(blocks) {
    while (leaves_ < blocks.size()) leaves_ *= 2;
    latest_last_.assign(2 * leaves_, INT_MIN);
  }

  void add(size_t block) {
    size_t node = leaves_ + block;
    for (latest_last_[node] = blocks_[block].last_step; node > 1; node /= 2)
      latest_last_[node / 2] = std::max(latest_last_[node], latest_last_[node ^ 1]);
  }

  // Calls visit(block) for each placed block live at a step of [first, last].
  template <typename Visit>
  void live_during(int first, int last, Visit visit) const {
    // Those that start by `last` are a prefix; of them, those that end at `first` or later.
    size_t end = size_t(std::upper_bound(blocks_.begin(), blocks_.end(), last,
                                         [](int step, const Block& b) { return step < b.first_step; }) -
                        blocks_.begin());
    visit_prefix(1, 0, leaves_, end, first, visit);
  }

 private:
  template <typename Visit>
  void visit_prefix(size_t node, size_t low, size_t high, size_t end, int first, Visit& visit) const {
    if (end <= low || latest_last_[node] < first) return;
    if (high - low == 1) return visit(low);
    size_t middle = (low + high) / 2;
    visit_prefix(2 * node, low, middle, end, first, visit);
    visit_prefix(2 * node + 1, middle, high, end, first, visit);
  }

  const std::vector<Block>& blocks_;
  size_t leaves_ = 1;
  std::vector<int> latest_last_;  // the tree, 1-based; INT_MIN where nothing is placed
};

// Offsets for one arena's blocks (given in first-step order), placed largest
// first (earliest, then longest lived, on ties): each goes into the smallest
// gap between the blocks live alongside it that holds it, else just past the
// highest of them. Blocks of one size thus go in step order, which needs no
// more space than the most of them live at once.
std::vector<uint64_t> place_blocks(const std::vector<Block>& blocks) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  auto lifetime = [&](size_t b) { return blocks[b].last_step - blocks[b].first_step; };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (blocks[a].bytes != blocks[b].bytes) return blocks[a].bytes > blocks[b].bytes;
    if (blocks[a].first_step != blocks[b].first_step) return blocks[a].first_step < blocks[b].first_step;
    if (lifetime(a) != lifetime(b)) return lifetime(a) > lifetime(b);
    return a < b;
  });

  std::vector<uint64_t> offsets(blocks.size(), 0);
  PlacedBlocks placed(blocks);
  std::vector<std::pair<uint64_t, uint64_t>> alongside;  // (offset, end)
  for (size_t b : order) {
    alongside.clear();
    placed.live_during(blocks[b].first_step, blocks[b].last_step, [&](size_t other) {
      alongside.push_back({offsets[other], offsets[other] + blocks[other].bytes});
    });
    std::sort(alongside.begin(), alongside.end());
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, reached = 0;
    for (auto [offset, end] : alongside) {
      if (offset > reached && offset - reached >= blocks[b].bytes && offset - reached < best_gap) {
        best = reached;
        best_gap = offset - reached;
      }
      reached = std::max(reached, end);
    }
    offsets[b] = best != UINT64_MAX ? best : reached;
    placed.add(b);
  }
  return offsets;
}

}  // namespace

uint64_t align_to_arena(uint64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

uint64_t MemoryPlan::planned_bytes(int device) const {
  uint64_t total = 0;
  for (const ArenaPlan& a : arenas)
    if (a.key.device == device) total += a.bytes;
  return total;
}

uint64_t MemoryPlan::lower_bound_bytes(int device) const {
  uint64_t total = 0;
  for (const ArenaPlan& a : arenas)
    if (a.key.device == device) total += a.lower_bound_bytes;
  return total;
}

MemoryPlan plan_memory(const MemoryProblem& problem) {
  validate(problem);
  const std::vector<PlannedTensor>& tensors = problem.tensors;
  const size_t n = tensors.size();
  std::vector<int> by_first(n);  // the order tensors are written in
  std::iota(by_first.begin(), by_first.end(), 0);
  std::stable_sort(by_first.begin(), by_first.end(),
                   [&](int a, int b) { return tensors[size_t(a)].first_step < tensors[size_t(b)].first_step; });
  MemoryPlan plan;
  plan.shares_with = choose_handovers(tensors, by_first);

  // One block per chain of handovers, in first-step order per arena. A
  // tensor comes after the one it takes over in step order, so walking the
  // tensors by first step meets each chain at its start.
  std::vector<std::vector<Block>> blocks(problem.arenas.size());
  std::vector<size_t> block_of(n, SIZE_MAX);  // index into blocks[tensor's arena]
  for (int i : by_first) {
    const PlannedTensor& t = tensors[size_t(i)];
    std::vector<Block>& arena = blocks[size_t(t.arena)];
    if (align_to_arena(t.bytes) == 0) continue;
    if (int source = plan.shares_with[size_t(i)]; source >= 0) {
      block_of[size_t(i)] = block_of[size_t(source)];
      arena[block_of[size_t(i)]].last_step = t.last_step;
    } else {
      block_of[size_t(i)] = arena.size();
      arena.push_back({align_to_arena(t.bytes), t.first_step, t.last_step});
    }
  }
  std::vector<std::vector<uint64_t>> block_offsets;
  for (const std::vector<Block>& arena : blocks) block_offsets.push_back(place_blocks(arena));
  plan.offsets.assign(n, 0);
  std::vector<uint64_t> arena_bytes(problem.arenas.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    if (block_of[i] == SIZE_MAX) continue;
    size_t a = size_t(tensors[i].arena);
    plan.offsets[i] = block_offsets[a][block_of[i]];
    arena_bytes[a] = std::max(arena_bytes[a], plan.offsets[i] + align_to_arena(tensors[i].bytes));
  }

  // The lower bound: the most aligned bytes live at one step. A tensor taken
  // over in place stops counting one step early, where its successor starts.
  std::vector<bool> taken_over(n, false);
  for (int source : plan.shares_with)
    if (source >= 0) taken_over[size_t(source)] = true;
  std::vector<std::vector<std::pair<int, int64_t>>> live_delta(problem.arenas.size());  // (step, change)
  for (size_t i = 0; i < n; ++i) {
    const PlannedTensor& t = tensors[i];
    int64_t bytes = int64_t(align_to_arena(t.bytes));
    int end = taken_over[i] ? t.last_step - 1 : t.last_step;
    live_delta[size_t(t.arena)].push_back({t.first_step, bytes});
    live_delta[size_t(t.arena)].push_back({end + 1, -bytes});
  }
  for (size_t a = 0; a < problem.arenas.size(); ++a) {
    std::vector<std::pair<int, int64_t>>& deltas = live_delta[a];
    std::sort(deltas.begin(), deltas.end());
    int64_t live = 0, most = 0;
    for (size_t k = 0; k < deltas.size(); ++k) {
      live += deltas[k].second;
      // Only once every change at this step is in.
      if (k + 1 == deltas.size() || deltas[k + 1].first != deltas[k].first) most = std::max(most, live);
    }
    plan.arenas.push_back({problem.arenas[a], arena_bytes[a], uint64_t(most)});
  }
  return plan;
}

}  // namespace switchyard
