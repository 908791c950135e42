// Small scheduling problems for the latency objective's tests: hand-made
// ones, random DAGs, and the brute-force optimum they are checked against.
#pragma once

#include <random>
#include <vector>

#include "placement/latency_solver.h"
#include "placement/makespan.h"

namespace switchyard {
namespace makespan_test {

// Steps with `times` on every device, and copies of `latency` + bytes * per_byte.
inline ScheduleProblem problem(int devices, const std::vector<double>& times, double latency = 0.1, double per_byte = 0.001) {
  ScheduleProblem p;
  p.num_devices = devices;
  for (double t : times) p.compute.push_back(std::vector<double>(size_t(devices), t));
  p.inputs.resize(times.size());
  p.copy.assign(size_t(devices), std::vector<CopyCost>(size_t(devices), CopyCost{latency, per_byte}));
  return p;
}

inline void read(ScheduleProblem& p, int consumer, int producer, int64_t bytes = 100) {
  p.inputs[size_t(consumer)].push_back({producer, producer, bytes});
  p.num_values = std::max(p.num_values, producer + 1);
}

inline LatencyGroups free_groups(const ScheduleProblem& p) {
  LatencyGroups g;
  for (int s = 0; s < p.num_steps(); ++s) {
    g.group_of_step.push_back(s);
    g.fixed.push_back(-1);
    g.allowed.push_back(std::vector<char>(size_t(p.num_devices), 1));
  }
  return g;
}

// A random DAG of 2 to `max_steps` steps with random times, copy sizes and pinned steps.
inline ScheduleProblem random_problem(std::mt19937& rng, LatencyGroups* groups, int max_steps = 10) {
  std::uniform_real_distribution<double> time(0.1, 5);
  int steps = 2 + int(rng() % unsigned(max_steps - 1));
  std::vector<double> times;
  for (int s = 0; s < steps; ++s) times.push_back(time(rng));
  ScheduleProblem p = problem(2, times, 0.05 * double(rng() % 10), 0.001);
  for (int s = 0; s < steps; ++s) p.compute[size_t(s)][1] = time(rng);  // devices differ
  std::vector<int64_t> bytes;  // of each step's result, whoever reads it
  for (int s = 0; s < steps; ++s) bytes.push_back(int64_t(rng() % 2000));
  for (int s = 1; s < steps; ++s) {
    int reads = 1 + int(rng() % 2);
    for (int r = 0; r < reads; ++r) {
      int producer = int(rng() % unsigned(s));
      read(p, s, producer, bytes[size_t(producer)]);
    }
  }
  *groups = free_groups(p);
  for (int s = 0; s < steps; ++s)
    if (rng() % 6 == 0) groups->fixed[size_t(s)] = int(rng() % 2);
  return p;
}

// The least `objective` (the makespan unless told) over every placement on two devices that keeps the pinned steps.
inline double brute_force(const ScheduleProblem& p, const LatencyGroups& g,
                          double (*objective)(const ScheduleProblem&, const std::vector<int>&) = simulate_makespan) {
  double best = kCannotRun;
  for (unsigned mask = 0; mask < (1u << p.num_steps()); ++mask) {
    std::vector<int> device;
    bool ok = true;
    for (int s = 0; s < p.num_steps(); ++s) {
      device.push_back(int((mask >> s) & 1));
      ok &= g.fixed[size_t(s)] < 0 || g.fixed[size_t(s)] == device.back();
    }
    if (ok) best = std::min(best, objective(p, device));
  }
  return best;
}

}  // namespace makespan_test
}  // namespace switchyard
