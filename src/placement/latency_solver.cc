// Candidates, exhaustive search for small problems, critical-path local
// search and branch and bound for the latency objective.
#include "placement/latency_solver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "placement/branch_and_bound.h"
#include "placement/stone_cut.h"

namespace switchyard {

namespace {

class LatencySearch {
 public:
  LatencySearch(const ScheduleProblem& p, const LatencyGroups& g, const LatencyOptions& o)
      : p_(p), g_(g), o_(o) {
    long size = p.num_steps();
    for (const auto& in : p.inputs) size += long(in.size());
    budget_ = o.max_evaluations > 0 ? o.max_evaluations : std::max(200L, 10'000'000L / std::max(1L, size));
    size_ = size;
    for (int group = 0; group < g.num_groups(); ++group) {
      bool any = false;
      for (int d = 0; d < p.num_devices; ++d) any |= bool(g.allowed[size_t(group)][size_t(d)]);
      if (!any) throw std::invalid_argument("group " + std::to_string(group) + " can run on no device");
      int fixed = g.fixed[size_t(group)];
      if (fixed >= 0 && !g.allowed[size_t(group)][size_t(fixed)])
        throw std::invalid_argument("group " + std::to_string(group) + " is pinned where it cannot run");
    }
  }

  LatencyPlan run(const std::vector<std::vector<int>>& starts) {
    std::vector<std::vector<int>> candidates;
    for (const auto& s : starts) candidates.push_back(sanitize(s));
    for (int d = 0; d < p_.num_devices; ++d) candidates.push_back(sanitize(std::vector<int>(size_t(g_.num_groups()), d)));
    candidates.push_back(greedy());
    // Stone's cut between the default device and each other one (every
    // pair when there are two): optimal while the devices take turns.
    bool stone_exact = false;
    for (int other = 0; other < p_.num_devices; ++other) {
      if (other == o_.default_device) continue;
      auto cut = stone_cut(p_, g_, std::min(other, o_.default_device), std::max(other, o_.default_device),
                           o_.default_device);
      if (!cut) continue;
      candidates.push_back(*cut);
      stone_exact = p_.num_devices == 2;
    }
    for (const auto& c : candidates) consider(c);
    LatencyPlan plan;
    if (stone_exact && runs_serially(p_)) {
      // Nothing can overlap, so the makespan is the cut's sum: exact at any size.
      plan.exact = true;
      plan.method = "optimal: nothing can overlap, so Stone's minimum cut is exact";
    } else if (exhaustive_fits()) {
      const long before = evaluations_;
      exhaustive();
      plan.exact = true;
      plan.method = "optimal: all " + std::to_string(evaluations_ - before) + " placements tried";
    } else {
      // Local search from each candidate in turn, each with its share of
      // the budget: the best start is not always the best basin.
      std::vector<int> overall = best_;
      LatencyScore overall_score = best_score_;
      const long share = budget_ / long(candidates.size());
      for (const auto& c : candidates) {
        best_ = c;
        best_score_ = score(c);
        local_search(evaluations_ + share);
        if (best_score_.better_than(overall_score)) overall = best_, overall_score = best_score_;
      }
      best_ = overall;
      best_score_ = overall_score;
      plan.method = "local search from " + std::to_string(candidates.size()) + " starting points over " +
                    std::to_string(evaluations_) + " simulated schedules, not proven optimal";
      // Local search's best is a strong incumbent: branch and bound from it
      // proves it optimal, or finds the optimum, when it ends in budget.
      if (long nodes = bound_node_limit(); nodes > 0) {
        BoundedSearch bounded = branch_and_bound(p_, g_, o_.default_device, best_, nodes);
        if (bounded.complete) {
          best_ = bounded.group_device;
          best_score_ = bounded.score;
          plan.exact = true;
          plan.method = "optimal: branch and bound over " + std::to_string(bounded.nodes) + " partial placements";
        }
      }
    }
    plan.group_device = best_;
    plan.step_device = expand(best_);
    plan.makespan = best_score_.makespan;
    plan.evaluations = evaluations_;
    return plan;
  }

 private:
  std::vector<int> expand(const std::vector<int>& group_device) const {
    std::vector<int> out(size_t(p_.num_steps()));
    for (int s = 0; s < p_.num_steps(); ++s) out[size_t(s)] = group_device[size_t(g_.group_of_step[size_t(s)])];
    return out;
  }

  LatencyScore score(const std::vector<int>& group_device) {
    ++evaluations_;
    LatencyScore s{simulate_makespan(p_, expand(group_device)), 0};
    for (int group = 0; group < g_.num_groups(); ++group)
      s.off_default += g_.fixed[size_t(group)] < 0 && group_device[size_t(group)] != o_.default_device;
    return s;
  }

  bool consider(const std::vector<int>& group_device) {
    LatencyScore s = score(group_device);
    if (!best_.empty() && !s.better_than(best_score_)) return false;
    best_ = group_device;
    best_score_ = s;
    return true;
  }

  int first_allowed(int group) const {
    if (g_.allowed[size_t(group)][size_t(o_.default_device)]) return o_.default_device;
    for (int d = 0;; ++d)
      if (g_.allowed[size_t(group)][size_t(d)]) return d;
  }

  // Pinned groups on their device; a group where it cannot run on the default (or first) device it can.
  std::vector<int> sanitize(std::vector<int> group_device) const {
    for (int group = 0; group < g_.num_groups(); ++group) {
      int& d = group_device[size_t(group)];
      if (g_.fixed[size_t(group)] >= 0) d = g_.fixed[size_t(group)];
      else if (d < 0 || d >= p_.num_devices || !g_.allowed[size_t(group)][size_t(d)]) d = first_allowed(group);
    }
    return group_device;
  }

  // In program order, each free group goes where its first step would finish
  // soonest (ties: the default device, then the lowest index).
  std::vector<int> greedy() {
    std::vector<int> group_device(g_.fixed);
    ScheduleSimulator sim(p_);
    for (int i = 0; i < p_.num_steps(); ++i) {
      const int s = p_.step_at(i);
      const int group = g_.group_of_step[size_t(s)];
      int& d = group_device[size_t(group)];
      if (d < 0) {
        d = first_allowed(group);
        double soonest = sim.finish_if(s, d);
        for (int other = 0; other < p_.num_devices; ++other) {
          if (!g_.allowed[size_t(group)][size_t(other)]) continue;
          double finish = sim.finish_if(s, other);
          if (finish < soonest - 1e-12 * std::max(1.0, soonest)) soonest = finish, d = other;
        }
      }
      sim.place(s, d);
    }
    return group_device;
  }

  bool exhaustive_fits() const {
    long combinations = 1;
    for (int group = 0; group < g_.num_groups(); ++group) {
      if (g_.fixed[size_t(group)] >= 0) continue;
      combinations *= long(std::count(g_.allowed[size_t(group)].begin(), g_.allowed[size_t(group)].end(), 1));
      if (combinations > o_.exhaustive_limit) return false;
    }
    // A large program with few free groups (most of it pinned) would
    // simulate too long: the work of exhaustive search is bounded too.
    return combinations * size_ <= 40'000'000L;
  }

  // Its node budget: each node copies the simulator and bounds the rest of
  // the program (work ~ size), and depth-first search holds one copy per
  // free group; 0 where that would not fit.
  long bound_node_limit() const {
    if (o_.bound_node_limit < 0) return 0;
    long free_groups = 0;
    for (int group = 0; group < g_.num_groups(); ++group) free_groups += g_.fixed[size_t(group)] < 0;
    if (free_groups * size_ > 4'000'000L) return 0;
    return o_.bound_node_limit > 0 ? o_.bound_node_limit : std::max(1000L, 10'000'000L / std::max(1L, size_));
  }

  void exhaustive() {
    std::vector<int> free_groups;
    for (int group = 0; group < g_.num_groups(); ++group)
      if (g_.fixed[size_t(group)] < 0) free_groups.push_back(group);
    std::vector<int> current = sanitize(std::vector<int>(size_t(g_.num_groups()), -1));
    for (int group : free_groups) current[size_t(group)] = -1;
    // An odometer over the allowed devices of the free groups.
    auto advance = [&](int group) {
      for (int d = current[size_t(group)] + 1; d < p_.num_devices; ++d)
        if (g_.allowed[size_t(group)][size_t(d)]) return current[size_t(group)] = d, true;
      return false;
    };
    for (int group : free_groups) advance(group);
    while (true) {
      consider(current);
      size_t i = 0;
      for (; i < free_groups.size(); ++i) {
        if (advance(free_groups[i])) break;
        current[size_t(free_groups[i])] = -1;
        advance(free_groups[i]);
      }
      if (i == free_groups.size()) return;
    }
  }

  // The free groups along the critical path, in order, each once.
  std::vector<int> critical_groups() const {
    std::vector<int> out;
    std::vector<char> seen(size_t(g_.num_groups()), 0);
    for (int s : summarise_schedule(p_, expand(best_)).critical_path) {
      int group = g_.group_of_step[size_t(s)];
      if (g_.fixed[size_t(group)] < 0 && !seen[size_t(group)]) out.push_back(group), seen[size_t(group)] = 1;
    }
    return out;
  }

  // Tries one move: `moved` groups to device `to`; keeps it when better.
  bool try_move(const std::vector<int>& moved, int to) {
    std::vector<int> next = best_;
    for (int group : moved) {
      if (!g_.allowed[size_t(group)][size_t(to)]) return false;
      next[size_t(group)] = to;
    }
    return consider(next);
  }

  void local_search(long budget) {
    bool improved = true;
    while (improved && evaluations_ < budget) {
      improved = false;
      std::vector<int> path = critical_groups();
      for (size_t i = 0; i < path.size() && !improved && evaluations_ < budget; ++i) {
        const int from = best_[size_t(path[i])];
        // The run of critical groups around this one on the same device: a branch.
        size_t lo = i, hi = i;
        while (lo > 0 && best_[size_t(path[lo - 1])] == from) --lo;
        while (hi + 1 < path.size() && best_[size_t(path[hi + 1])] == from) ++hi;
        std::vector<int> branch(path.begin() + long(lo), path.begin() + long(hi) + 1);
        for (int to = 0; to < p_.num_devices && !improved; ++to) {
          if (to == from) continue;
          improved = try_move({path[i]}, to) || (branch.size() > 1 && try_move(branch, to));
        }
      }
      // Off the critical path, a move can still free a queue the path waits on.
      for (int group = 0; group < g_.num_groups() && !improved && evaluations_ < budget; ++group) {
        if (g_.fixed[size_t(group)] >= 0) continue;
        for (int to = 0; to < p_.num_devices && !improved; ++to)
          if (to != best_[size_t(group)]) improved = try_move({group}, to);
      }
    }
  }

  const ScheduleProblem& p_;
  const LatencyGroups& g_;
  const LatencyOptions& o_;
  long budget_ = 0, evaluations_ = 0, size_ = 0;
  std::vector<int> best_;
  LatencyScore best_score_;
};

}  // namespace

bool LatencyScore::better_than(const LatencyScore& other) const {
  const double tolerance = 1e-9 * std::max(1.0, std::fabs(other.makespan));
  if (makespan < other.makespan - tolerance) return true;
  return makespan <= other.makespan + tolerance && off_default < other.off_default;
}

LatencyPlan minimise_makespan(const ScheduleProblem& problem, const LatencyGroups& groups,
                              const std::vector<std::vector<int>>& starts, const LatencyOptions& options) {
  return LatencySearch(problem, groups, options).run(starts);
}

}  // namespace switchyard
