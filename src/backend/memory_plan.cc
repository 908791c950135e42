// Best-fit arena planning over live ranges, with in-place reuse.
#include "backend/memory_plan.h"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace switchyard {

namespace {

// One arena's free space during the replay: free blocks by offset (to merge
// neighbours) and by size (to find the best fit), and the current end. The
// end only grows; its high-water mark is the arena size.
class ArenaAllocator {
 public:
  uint64_t allocate(uint64_t bytes) {
    // Best fit: the smallest free block that holds `bytes` (lowest offset on ties).
    auto best = by_size_.lower_bound({bytes, 0});
    if (best != by_size_.end()) {
      auto [size, offset] = *best;
      erase(offset);
      if (size > bytes) insert(offset + bytes, size - bytes);
      return offset;
    }
    // Nothing fits: grow the arena, starting inside a free block that touches its end.
    uint64_t offset = end_;
    if (!by_offset_.empty()) {
      auto last = std::prev(by_offset_.end());
      if (last->first + last->second == end_) {
        offset = last->first;
        erase(offset);
      }
    }
    end_ = offset + bytes;
    return offset;
  }

  void release(uint64_t offset, uint64_t bytes) {
    if (by_offset_.count(offset)) throw std::logic_error("memory plan: a block was freed twice");
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && offset + bytes == next->first) {
      bytes += next->second;
      erase(next->first);
    }
    auto following = by_offset_.lower_bound(offset);
    if (following != by_offset_.begin()) {
      auto previous = std::prev(following);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        bytes += previous->second;
        erase(offset);
      }
    }
    insert(offset, bytes);
  }

  uint64_t end() const { return end_; }

 private:
  void insert(uint64_t offset, uint64_t bytes) {
    by_offset_.emplace(offset, bytes);
    by_size_.emplace(bytes, offset);
  }
  void erase(uint64_t offset) {
    auto it = by_offset_.find(offset);
    by_size_.erase({it->second, offset});
    by_offset_.erase(it);
  }

  std::map<uint64_t, uint64_t> by_offset_;           // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> by_size_;  // (size, offset)
  uint64_t end_ = 0;
};

// Tensor indices ordered by `step_of` (index order within a step).
template <typename StepOf>
std::vector<int> ordered_by(size_t n, StepOf step_of) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return step_of(a) < step_of(b); });
  return order;
}

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
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  plan.shares_with.assign(n, -1);
  std::vector<ArenaAllocator> allocators(problem.arenas.size());
  std::vector<bool> taken_over(n, false);

  // Replay the steps in order: each step's writes are placed before its dying
  // tensors are freed, so a kernel's outputs never overlap its inputs unless
  // an output takes an input over on purpose.
  std::vector<int> written = ordered_by(n, [&](int i) { return tensors[size_t(i)].first_step; });
  std::vector<int> dying = ordered_by(n, [&](int i) { return tensors[size_t(i)].last_step; });
  for (size_t w = 0, d = 0; w < n || d < n;) {
    int step = std::min(w < n ? tensors[size_t(written[w])].first_step : INT_MAX,
                        d < n ? tensors[size_t(dying[d])].last_step : INT_MAX);
    for (; w < n && tensors[size_t(written[w])].first_step == step; ++w) {
      int i = written[w];
      const PlannedTensor& t = tensors[size_t(i)];
      uint64_t bytes = align_to_arena(t.bytes);
      if (bytes == 0) continue;
      for (int c : t.in_place_candidates) {
        const PlannedTensor& source = tensors[size_t(c)];
        if (c != i && !taken_over[size_t(c)] && source.arena == t.arena && source.first_step < t.first_step &&
            source.last_step == t.first_step && align_to_arena(source.bytes) == bytes) {
          taken_over[size_t(c)] = true;
          plan.shares_with[size_t(i)] = c;
          plan.offsets[size_t(i)] = plan.offsets[size_t(c)];
          break;
        }
      }
      if (plan.shares_with[size_t(i)] < 0) plan.offsets[size_t(i)] = allocators[size_t(t.arena)].allocate(bytes);
    }
    for (; d < n && tensors[size_t(dying[d])].last_step == step; ++d) {
      int i = dying[d];
      uint64_t bytes = align_to_arena(tensors[size_t(i)].bytes);
      if (bytes != 0 && !taken_over[size_t(i)])
        allocators[size_t(tensors[size_t(i)].arena)].release(plan.offsets[size_t(i)], bytes);
    }
  }

  // The lower bound: the most aligned bytes live at one step. A tensor taken
  // over in place stops counting one step early, where its successor starts.
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
    plan.arenas.push_back({problem.arenas[a], allocators[a].end(), uint64_t(most)});
  }
  return plan;
}

}  // namespace switchyard
