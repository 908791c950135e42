// Stone's cut: the source side is device a, the sink side device b.
#include "placement/stone_cut.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "placement/min_cut.h"

namespace switchyard {

namespace {

std::vector<int> positions(const ScheduleProblem& p) {
  std::vector<int> position(size_t(p.num_steps()));
  for (int i = 0; i < p.num_steps(); ++i) position[size_t(p.step_at(i))] = i;
  return position;
}

// Times in 1e-9 ms, so a sum over a large program stays exact enough and
// far below the cut's infinity.
Capacity units(double ms) { return Capacity(std::llround(ms * 1e9)); }

}  // namespace

double serial_time(const ScheduleProblem& p, const std::vector<int>& device) {
  const std::vector<int> position = positions(p);
  std::set<std::pair<int, int>> copied;  // (value, destination)
  double total = 0;
  for (int i = 0; i < p.num_steps(); ++i) {
    const int s = p.step_at(i), d = device[size_t(s)];
    total += p.compute[size_t(s)][size_t(d)];
    for (const ScheduleInput& in : p.inputs[size_t(s)]) {
      const int from = device[size_t(in.producer)];
      // A producer later in program order is not a dependence the queues see (makespan.h).
      if (position[size_t(in.producer)] > position[size_t(s)] || from == d) continue;
      if (copied.insert({in.value, d}).second) total += p.copy[size_t(from)][size_t(d)].time(in.bytes);
    }
  }
  return total;
}

bool runs_serially(const ScheduleProblem& p) {
  const std::vector<int> position = positions(p);
  for (int i = 1; i < p.num_steps(); ++i) {
    const int s = p.step_at(i), previous = p.step_at(i - 1);
    bool reads_previous = false;
    for (const ScheduleInput& in : p.inputs[size_t(s)]) {
      if (position[size_t(in.producer)] > i) continue;
      if (in.producer != previous) return false;
      reads_previous = true;
    }
    if (!reads_previous) return false;
  }
  return true;
}

std::optional<std::vector<int>> stone_cut(const ScheduleProblem& p, const LatencyGroups& g, int a, int b,
                                          int default_device) {
  const int num_groups = g.num_groups();
  const int source = num_groups, sink = num_groups + 1;
  // Time is the first key, then one unit per free group off the default.
  const Capacity time_weight = Capacity(num_groups) + 1;
  std::vector<double> time_on_a(size_t(num_groups), 0), time_on_b(size_t(num_groups), 0);
  for (int s = 0; s < p.num_steps(); ++s) {
    const size_t group = size_t(g.group_of_step[size_t(s)]);
    time_on_a[group] += p.compute[size_t(s)][size_t(a)];
    time_on_b[group] += p.compute[size_t(s)][size_t(b)];
  }
  MinCut cut(num_groups + 2);
  for (int group = 0; group < num_groups; ++group) {
    const size_t i = size_t(group);
    const int fixed = g.fixed[i];
    if (fixed >= 0) {
      // Its compute is the same in every cut (and may be kCannotRun: a wish
      // planning reported); only its side is given.
      if (fixed != a && fixed != b) return std::nullopt;
      cut.add_edge(fixed == a ? source : group, fixed == a ? group : sink, kInfiniteCapacity);
      continue;
    }
    const bool on_a = g.allowed[i][size_t(a)] && time_on_a[i] != kCannotRun;
    const bool on_b = g.allowed[i][size_t(b)] && time_on_b[i] != kCannotRun;
    if (!on_a && !on_b) return std::nullopt;
    auto cost = [&](double time, int device) { return units(time) * time_weight + Capacity(device != default_device); };
    // Cut source -> group: the group is on b; group -> sink: on a.
    cut.add_edge(source, group, on_b ? cost(time_on_b[i], b) : kInfiniteCapacity);
    cut.add_edge(group, sink, on_a ? cost(time_on_a[i], a) : kInfiniteCapacity);
  }
  // Each value is copied once to the other device when any reader is there:
  // a hyperedge, made of an extra node per direction.
  const std::vector<int> position = positions(p);
  std::vector<std::vector<int>> readers(size_t(p.num_values));
  std::vector<int> producer(size_t(p.num_values), -1);
  std::vector<int64_t> bytes(size_t(p.num_values), 0);
  for (int i = 0; i < p.num_steps(); ++i)
    for (const ScheduleInput& in : p.inputs[size_t(p.step_at(i))]) {
      const int s = p.step_at(i);
      if (position[size_t(in.producer)] > i) continue;
      const int reader = g.group_of_step[size_t(s)], from = g.group_of_step[size_t(in.producer)];
      if (reader == from) continue;
      auto& r = readers[size_t(in.value)];
      if (std::find(r.begin(), r.end(), reader) == r.end()) r.push_back(reader);
      if (producer[size_t(in.value)] < 0) bytes[size_t(in.value)] = in.bytes;  // the first reader's copy, as queued
      producer[size_t(in.value)] = from;
    }
  for (int v = 0; v < p.num_values; ++v) {
    const auto& r = readers[size_t(v)];
    if (r.empty()) continue;
    const int from = producer[size_t(v)];
    const Capacity a_to_b = units(p.copy[size_t(a)][size_t(b)].time(bytes[size_t(v)])) * time_weight;
    const Capacity b_to_a = units(p.copy[size_t(b)][size_t(a)].time(bytes[size_t(v)])) * time_weight;
    if (r.size() == 1) {
      cut.add_edge(from, r[0], a_to_b);
      cut.add_edge(r[0], from, b_to_a);
      continue;
    }
    // Producer on a, some reader on b: either from -> to_b or to_b -> reader is cut.
    const int to_b = cut.add_node(), to_a = cut.add_node();
    cut.add_edge(from, to_b, a_to_b);
    cut.add_edge(to_a, from, b_to_a);
    for (int reader : r) {
      cut.add_edge(to_b, reader, kInfiniteCapacity);
      cut.add_edge(reader, to_a, kInfiniteCapacity);
    }
  }
  cut.solve(source, sink);
  std::vector<int> group_device(static_cast<size_t>(num_groups));
  for (int group = 0; group < num_groups; ++group) group_device[size_t(group)] = cut.on_source_side(group) ? a : b;
  return group_device;
}

}  // namespace switchyard
