// The queue simulation behind the latency objective.
#include "placement/makespan.h"

#include <algorithm>

namespace switchyard {

ScheduleSimulator::ScheduleSimulator(const ScheduleProblem& problem) : p_(problem) { reset(); }

void ScheduleSimulator::reset() {
  const size_t devices = size_t(p_.num_devices), steps = size_t(p_.num_steps());
  queue_end_.assign(devices, 0);
  queue_last_.assign(devices, -1);
  copy_finish_.assign(size_t(p_.num_values) * devices, -1);
  start_.assign(steps, 0);
  finish_.assign(steps, 0);
  device_.assign(steps, -1);
  waited_for_.assign(steps, -1);
  compute_time_.assign(devices, 0);
  copy_time_.assign(devices, 0);
}

// Both walk the inputs of a step as its device's queue would: copies not
// yet made are enqueued one after another before the step.
double ScheduleSimulator::finish_if(int step, int device) const {
  const double run = p_.compute[size_t(step)][size_t(device)];
  if (run == kCannotRun) return kCannotRun;
  double queue = queue_end_[size_t(device)], ready = queue;
  for (const ScheduleInput& in : p_.inputs[size_t(step)]) {
    int from = device_[size_t(in.producer)];
    if (from < 0) continue;  // later in program order: not a data dependence the queue sees
    if (from == device) {
      ready = std::max(ready, finish_[size_t(in.producer)]);
      continue;
    }
    double arrived = copy_finish_[size_t(in.value) * size_t(p_.num_devices) + size_t(device)];
    if (arrived < 0) {
      queue = std::max(queue, finish_[size_t(in.producer)]) + p_.copy[size_t(from)][size_t(device)].time(in.bytes);
      arrived = queue;
    }
    ready = std::max(ready, arrived);
  }
  return std::max(ready, queue) + run;
}

void ScheduleSimulator::place(int step, int device) {
  const size_t d = size_t(device), s = size_t(step);
  double queue = queue_end_[d], ready = queue;
  int waited = queue_last_[d];
  for (const ScheduleInput& in : p_.inputs[s]) {
    int from = device_[size_t(in.producer)];
    if (from < 0) continue;
    double arrived;
    if (from == device) {
      arrived = finish_[size_t(in.producer)];
    } else {
      double& copied = copy_finish_[size_t(in.value) * size_t(p_.num_devices) + d];
      if (copied < 0) {
        double copy_start = std::max(queue, finish_[size_t(in.producer)]);
        double took = p_.copy[size_t(from)][d].time(in.bytes);
        copied = queue = copy_start + took;
        copy_time_[d] += took;
      }
      arrived = copied;
    }
    if (arrived > ready) {
      ready = arrived;
      waited = in.producer;
    }
  }
  const double run = p_.compute[s][d];
  start_[s] = std::max(ready, queue);
  finish_[s] = start_[s] + run;
  compute_time_[d] += run;
  device_[s] = device;
  waited_for_[s] = waited;
  queue_end_[d] = finish_[s];
  queue_last_[d] = step;
}

double ScheduleSimulator::makespan() const {
  double end = 0;
  for (double q : queue_end_) end = std::max(end, q);
  return end;
}

double simulate_makespan(const ScheduleProblem& problem, const std::vector<int>& device) {
  ScheduleSimulator sim(problem);
  for (int i = 0; i < problem.num_steps(); ++i) sim.place(problem.step_at(i), device[size_t(problem.step_at(i))]);
  return sim.makespan();
}

ScheduleSummary summarise_schedule(const ScheduleProblem& problem, const std::vector<int>& device) {
  ScheduleSimulator sim(problem);
  for (int i = 0; i < problem.num_steps(); ++i) sim.place(problem.step_at(i), device[size_t(problem.step_at(i))]);
  ScheduleSummary out;
  out.makespan = sim.makespan();
  out.compute_ms = sim.compute_time();
  out.copy_ms = sim.copy_time();
  int last = -1;
  for (int s = 0; s < problem.num_steps(); ++s)
    if (last < 0 || sim.finish()[size_t(s)] >= sim.finish()[size_t(last)]) last = s;
  for (int s = last; s >= 0 && out.critical_path.size() < size_t(problem.num_steps()); s = sim.waited_for()[size_t(s)])
    out.critical_path.push_back(s);
  std::reverse(out.critical_path.begin(), out.critical_path.end());
  return out;
}

}  // namespace switchyard
