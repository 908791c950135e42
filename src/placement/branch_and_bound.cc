// Branch and bound over the free groups' devices for the latency objective.
#include "placement/branch_and_bound.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace switchyard {

namespace {

class BranchAndBound {
 public:
  BranchAndBound(const ScheduleProblem& p, const LatencyGroups& g, int default_device, long node_limit)
      : p_(p), g_(g), default_device_(default_device), node_limit_(node_limit) {
    const int steps = p.num_steps();
    position_.assign(size_t(steps), 0);
    for (int i = 0; i < steps; ++i) position_[size_t(p.step_at(i))] = i;
    cheapest_.assign(size_t(steps), kCannotRun);
    for (int s = 0; s < steps; ++s) {
      const int group = g.group_of_step[size_t(s)];
      for (int d = 0; d < p.num_devices; ++d)
        if (g.allowed[size_t(group)][size_t(d)]) cheapest_[size_t(s)] = std::min(cheapest_[size_t(s)], p.compute[size_t(s)][size_t(d)]);
    }
    earliest_.assign(size_t(steps) * size_t(p.num_devices), kCannotRun);
    // A value is copied once per destination, at the size its first reader
    // there gives; the bound takes the least any reader gives.
    least_bytes_.assign(size_t(p.num_values), 0);
    std::vector<char> seen(size_t(p.num_values), 0);
    for (const auto& inputs : p.inputs)
      for (const ScheduleInput& in : inputs) {
        int64_t& least = least_bytes_[size_t(in.value)];
        least = seen[size_t(in.value)] ? std::min(least, in.bytes) : in.bytes;
        seen[size_t(in.value)] = 1;
      }
  }

  BoundedSearch run(const std::vector<int>& incumbent) {
    best_.group_device = incumbent;
    best_.score = score_of(incumbent);
    std::vector<int> assignment(g_.fixed);
    // A group with no steps changes no time: the default device where it may go.
    std::vector<char> has_steps(size_t(g_.num_groups()), 0);
    for (int group : g_.group_of_step) has_steps[size_t(group)] = 1;
    int off_default = 0;
    for (int group = 0; group < g_.num_groups(); ++group) {
      if (assignment[size_t(group)] >= 0 || has_steps[size_t(group)]) continue;
      const auto& allowed = g_.allowed[size_t(group)];
      int d = allowed[size_t(default_device_)] ? default_device_ : int(std::find(allowed.begin(), allowed.end(), 1) - allowed.begin());
      assignment[size_t(group)] = d;
      off_default += d != default_device_;
    }
    ScheduleSimulator sim(p_);
    search(sim, 0, assignment, off_default);
    best_.complete = !aborted_;
    best_.nodes = nodes_;
    return best_;
  }

 private:
  LatencyScore score_of(const std::vector<int>& group_device) const {
    std::vector<int> device(size_t(p_.num_steps()));
    for (int s = 0; s < p_.num_steps(); ++s) device[size_t(s)] = group_device[size_t(g_.group_of_step[size_t(s)])];
    LatencyScore out{simulate_makespan(p_, device), 0};
    for (int group = 0; group < g_.num_groups(); ++group)
      out.off_default += g_.fixed[size_t(group)] < 0 && group_device[size_t(group)] != default_device_;
    return out;
  }

  // Places the steps whose groups have a device, from `position` on, until
  // one whose group is free; then branches on that group's device.
  void search(ScheduleSimulator& sim, int position, std::vector<int>& assignment, int off_default) {
    const int steps = p_.num_steps();
    for (; position < steps; ++position) {
      const int s = p_.step_at(position);
      const int d = assignment[size_t(g_.group_of_step[size_t(s)])];
      if (d < 0) break;
      sim.place(s, d);
    }
    ++nodes_;
    if (position == steps) {
      LatencyScore score{sim.makespan(), off_default};
      if (score.better_than(best_.score)) best_.group_device = assignment, best_.score = score;
      return;
    }
    if (nodes_ > node_limit_) {
      aborted_ = true;
      return;
    }
    if (cannot_beat_best(lower_bound(sim, position, assignment), off_default)) return;
    const int step = p_.step_at(position);
    const int group = g_.group_of_step[size_t(step)];
    std::vector<std::pair<double, int>> order;  // (finish of its first step there, device)
    for (int d = 0; d < p_.num_devices; ++d)
      if (g_.allowed[size_t(group)][size_t(d)]) order.push_back({sim.finish_if(step, d), d != default_device_ ? d + 1 : 0});
    std::sort(order.begin(), order.end());
    for (const auto& [finish, key] : order) {
      const int d = key == 0 ? default_device_ : key - 1;
      ScheduleSimulator child(sim);
      assignment[size_t(group)] = d;
      search(child, position, assignment, off_default + (d != default_device_));
      assignment[size_t(group)] = -1;
      if (aborted_) return;
    }
  }

  // No completion with a makespan of at least `bound` and at least
  // `off_default` groups off the default device is better than the best.
  bool cannot_beat_best(double bound, int off_default) const {
    const double best = best_.score.makespan;
    const double tolerance = 1e-9 * std::max(1.0, best);
    if (bound > best + tolerance) return true;
    return bound >= best - tolerance && off_default >= best_.score.off_default;
  }

  double lower_bound(const ScheduleSimulator& sim, int position, const std::vector<int>& assignment) {
    const int devices = p_.num_devices, steps = p_.num_steps();
    // Work: queue ends plus what must still run on each device, and the
    // free groups' steps at their cheapest shared out over all of them.
    std::vector<double> load(size_t(devices), 0.0);
    for (int d = 0; d < devices; ++d) load[size_t(d)] = sim.queue_end(d);
    double free_work = 0;
    for (int i = position; i < steps; ++i) {
      const int s = p_.step_at(i);
      const int d = assignment[size_t(g_.group_of_step[size_t(s)])];
      if (d >= 0) load[size_t(d)] += p_.compute[size_t(s)][size_t(d)];
      else free_work += cheapest_[size_t(s)];
    }
    double bound = *std::max_element(load.begin(), load.end());
    bound = std::max(bound, (std::accumulate(load.begin(), load.end(), 0.0) + free_work) / devices);
    // Paths, in program order: each step's earliest finish on each device
    // it may take, from its inputs' on theirs plus a copy where they differ.
    for (int i = position; i < steps; ++i) {
      const int s = p_.step_at(i);
      const int assigned = assignment[size_t(g_.group_of_step[size_t(s)])];
      const auto& allowed = g_.allowed[size_t(g_.group_of_step[size_t(s)])];
      double soonest = kCannotRun;
      for (int d = 0; d < devices; ++d) {
        double& finish = earliest(s, d);
        finish = kCannotRun;
        if (assigned >= 0 ? d != assigned : !allowed[size_t(d)]) continue;
        double start = sim.queue_end(d);
        for (const ScheduleInput& in : p_.inputs[size_t(s)]) start = std::max(start, arrival(sim, in, d, i));
        finish = start + p_.compute[size_t(s)][size_t(d)];
        soonest = std::min(soonest, finish);
      }
      bound = std::max(bound, soonest);
    }
    return bound;
  }

  double& earliest(int step, int device) { return earliest_[size_t(step) * size_t(p_.num_devices) + size_t(device)]; }

  double copy_time(int from, int to, int value) const {
    return p_.copy[size_t(from)][size_t(to)].time(least_bytes_[size_t(value)]);
  }

  // The soonest `in` can be on `device` for the step at program position `i`.
  double arrival(const ScheduleSimulator& sim, const ScheduleInput& in, int device, int i) {
    const int from = sim.device_of(in.producer);
    if (from == device) return sim.finish()[size_t(in.producer)];
    if (from >= 0) {
      const double copied = sim.copied_at(in.value, device);
      return copied >= 0 ? copied : sim.finish()[size_t(in.producer)] + copy_time(from, device, in.value);
    }
    if (position_[size_t(in.producer)] > i) return 0;  // later in program order: no dependence the queues see
    double soonest = kCannotRun;
    for (int d = 0; d < p_.num_devices; ++d) {
      const double finish = earliest(in.producer, d);
      if (finish == kCannotRun) continue;
      soonest = std::min(soonest, d == device ? finish : finish + copy_time(d, device, in.value));
    }
    return soonest;
  }

  const ScheduleProblem& p_;
  const LatencyGroups& g_;
  const int default_device_;
  const long node_limit_;
  std::vector<int> position_;
  std::vector<double> cheapest_;
  std::vector<int64_t> least_bytes_;  // per value
  std::vector<double> earliest_;  // scratch of lower_bound: per step and device, its earliest finish there
  BoundedSearch best_;
  long nodes_ = 0;
  bool aborted_ = false;
};

}  // namespace

BoundedSearch branch_and_bound(const ScheduleProblem& problem, const LatencyGroups& groups, int default_device,
                               const std::vector<int>& incumbent, long node_limit) {
  return BranchAndBound(problem, groups, default_device, node_limit).run(incumbent);
}

}  // namespace switchyard
