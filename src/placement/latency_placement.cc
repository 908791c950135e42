// Place nodes as schedule steps, with their measured times.
#include "placement/latency_placement.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <queue>
#include <set>

#include "op/placement_ops.h"
#include "placement/target_support.h"
#include "support/error.h"

namespace switchyard {

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

namespace {

std::string device_list(const CostFile& costs) {
  std::string out;
  for (const ProfiledDevice& d : costs.devices) out += (out.empty() ? "" : ", ") + d.name;
  return out.empty() ? "none" : out;
}

// Devices and routes of the build that the file has not measured.
void check_devices(const CompilationConfig& config, const CostFile& costs, const std::string& path) {
  std::string missing;
  std::set<std::string> measured;
  for (const ProfiledDevice& d : costs.devices) measured.insert(d.name);
  for (const VirtualDevice* d : config.devices)
    if (!measured.count(d->device_name()))
      missing += "\n  device " + d->device_name() + " (the file measured " + device_list(costs) + ")";
  for (const VirtualDevice* a : config.devices)
    for (const VirtualDevice* b : config.devices)
      if (a != b && !costs.copies.count({a->device_name(), b->device_name()}))
        missing += "\n  copies " + a->device_name() + " -> " + b->device_name();
  if (!missing.empty())
    throw Error(ErrorKind::kUsage, "cost file " + path + " lacks what --objective latency needs:" + missing +
                                       "\n  measure them with `switchyard profile MODEL --device ... -o " + path + "`");
}

}  // namespace

LatencyCosts latency_costs(const PlacementGraph& graph, const CompilationConfig& config, const CostFile& costs,
                           const std::string& path) {
  check_devices(config, costs, path);
  const size_t devices = config.devices.size();
  LatencyCosts out;
  out.handoff_ms = costs.handoff_ms;
  out.copy.assign(devices, std::vector<CopyCost>(devices));
  for (size_t a = 0; a < devices; ++a)
    for (size_t b = 0; b < devices; ++b)
      if (a != b) {
        out.copy[a][b] = costs.copies.at({config.devices[a]->device_name(), config.devices[b]->device_name()});
        out.copy[a][b].latency_ms += costs.handoff_ms;
      }
  out.overhead_ms.assign(devices, 0);
  for (size_t d = 0; d < devices; ++d)
    for (const ProfiledDevice& p : costs.devices)
      if (p.name == config.devices[d]->device_name()) out.overhead_ms[d] = p.overhead_ms;
  const AllCoresProfile* all = costs.all_cores ? &*costs.all_cores : nullptr;
  if (all)
    for (size_t d = 0; d < devices; ++d)
      if (config.devices[d]->device_name() == all->device) {
        out.all_cores_device = int(d);
        out.all_cores_threads = all->threads;
        out.all_cores_overhead_ms = all->overhead_ms;
      }
  out.all_cores_compute.assign(graph.nodes.size(), 0);
  out.compute.assign(graph.nodes.size(), std::vector<double>(devices, 0));
  std::set<std::string> missing;  // one line per operator and device
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const CallNode* call = as<CallNode>(graph.nodes[i].node);
    const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
    // Wishes and copies compute nothing (a copy's time is its value crossing devices).
    if (!op || op == on_device_op() || op == device_copy_op() || graph.nodes[i].what != op->name) continue;
    const std::string key = operator_cost_key(*call);
    for (size_t d = 0; d < devices; ++d) {
      const VirtualDevice* device = config.devices[d];
      if (!target_can_run(device->target(), op->name)) {
        out.compute[i][d] = kCannotRun;
        continue;
      }
      auto found = costs.operator_ms.find({key, device->device_name()});
      if (found != costs.operator_ms.end()) {
        out.compute[i][d] = found->second;
        continue;
      }
      std::string where = call->span().defined() ? " at " + call->span().to_string() : "";
      if (missing.size() < 20)
        missing.insert("  " + operator_cost_text(*call) + " on " + device->device_name() + where + " (key " + key + ")");
      else
        missing.insert("  ...");
    }
    if (out.all_cores_device >= 0) {
      if (out.compute[i][size_t(out.all_cores_device)] == kCannotRun) {
        out.all_cores_compute[i] = kCannotRun;
        continue;
      }
      auto found = all->operator_ms.find(key);
      if (found != all->operator_ms.end()) {
        out.all_cores_compute[i] = found->second;
      } else if (missing.size() < 20) {
        std::string where = call->span().defined() ? " at " + call->span().to_string() : "";
        missing.insert("  " + operator_cost_text(*call) + " on " + all->device + " with all " +
                       std::to_string(all->threads) + " threads" + where + " (key " + key + ")");
      }
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& line : missing) list += "\n" + line;
    throw Error(ErrorKind::kUsage, "cost file " + path + " has no time for these operators (measured on '" +
                                       costs.model + "'):" + list +
                                       "\n  profile this model with `switchyard profile` (the objective stays "
                                       "latency; nothing falls back to bytes)");
  }
  return out;
}

namespace {

// Place nodes with producers before consumers, else by index (Kahn's
// algorithm, lowest index first: a function's result node is made before
// its body, so index order is not program order). Nodes on a cycle, which
// planned programs have not, follow in index order.
std::vector<int> program_order(const ScheduleProblem& p) {
  const size_t n = size_t(p.num_steps());
  std::vector<std::vector<int>> readers(n);
  std::vector<int> waiting(n, 0);
  for (size_t s = 0; s < n; ++s)
    for (const ScheduleInput& in : p.inputs[s]) {
      readers[size_t(in.producer)].push_back(int(s));
      ++waiting[s];
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t s = 0; s < n; ++s)
    if (waiting[s] == 0) ready.push(int(s));
  std::vector<int> order;
  std::vector<char> placed(n, 0);
  while (!ready.empty()) {
    int s = ready.top();
    ready.pop();
    order.push_back(s);
    placed[size_t(s)] = 1;
    for (int r : readers[size_t(s)])
      if (--waiting[size_t(r)] == 0) ready.push(r);
  }
  for (size_t s = 0; s < n; ++s)
    if (!placed[s]) order.push_back(int(s));
  return order;
}

}  // namespace

ScheduleProblem schedule_problem(const PlacementGraph& graph, const LatencyCosts& costs) {
  ScheduleProblem p;
  p.num_devices = int(costs.copy.size());
  p.num_values = int(graph.values.size());
  p.compute = costs.compute;
  p.copy = costs.copy;
  p.inputs.resize(graph.nodes.size());
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const PlaceValue& value = graph.values[v];
    if (value.producer < 0) continue;
    for (PlaceId c : value.consumers) {
      auto& inputs = p.inputs[size_t(c)];
      if (c != value.producer && (inputs.empty() || inputs.back().value != int(v)))
        inputs.push_back({value.producer, int(v), value.bytes});
    }
  }
  // A device_copy's result node reads nothing in the graph (its source node
  // is tied to the input's producer instead); the schedule needs the data
  // dependence, and the copy it makes.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const CallNode* call = as<CallNode>(graph.nodes[i].node);
    if (!call || as<OpNode>(call->op) != device_copy_op() || graph.nodes[i].what != device_copy_op()->name) continue;
    std::vector<ValueId> leaves;
    graph.domains.at(call->args.at(0).get()).leaves(&leaves);
    for (ValueId v : leaves)
      if (graph.values[size_t(v)].producer >= 0)
        p.inputs[i].push_back({graph.values[size_t(v)].producer, int(v), graph.values[size_t(v)].bytes});
  }
  p.order = program_order(p);
  return p;
}

LatencyCosts all_cores_costs(const LatencyCosts& costs) {
  LatencyCosts out = costs;
  const int d = costs.all_cores_device;
  if (d < 0) return out;
  for (size_t i = 0; i < out.compute.size(); ++i) out.compute[i][size_t(d)] = costs.all_cores_compute[i];
  out.overhead_ms[size_t(d)] = costs.all_cores_overhead_ms;
  return out;
}

PredictedTimes predict_times(const PlacementGraph& graph, const CompilationConfig& config, const LatencyCosts& costs,
                             const std::vector<const VirtualDevice*>& device) {
  std::vector<int> index;
  for (const VirtualDevice* d : device) index.push_back(config.index_of(d));
  ScheduleSummary s = summarise_schedule(schedule_problem(graph, costs), index);
  // Every device with work pays its run overhead, at once with the others.
  double overhead = 0;
  for (size_t d = 0; d < s.compute_ms.size() && d < costs.overhead_ms.size(); ++d)
    if (s.compute_ms[d] > 0) overhead = std::max(overhead, costs.overhead_ms[d]);
  return {s.makespan + overhead, overhead, s.compute_ms, s.copy_ms,
          std::vector<PlaceId>(s.critical_path.begin(), s.critical_path.end())};
}

std::string latency_choice_text(const LatencyChoice& choice) {
  // With nothing crossing, the best placement kept the model on one device (its own cores).
  std::string split = ms_text(choice.split_ms) + " for the split over the build's devices (" +
                      (choice.handoffs == 0 ? std::string("none crossing: one device on its own cores")
                                            : std::to_string(choice.handoffs) +
                                                  (choice.handoffs == 1 ? " value" : " values") + " crossing devices") +
                      (choice.split_search.empty() ? "" : "; " + choice.split_search) + ")";
  if (choice.one_device_ms < 0) return "one device with every core: not a candidate (" + choice.unavailable + "); " + split + "\n";
  return "one device with every core: " + choice.device + " with " + std::to_string(choice.threads) +
         " threads, predicted " + ms_text(choice.one_device_ms) + ", against " + split + ": chose " +
         (choice.one_device ? "one device" : "the split") + "\n";
}

std::string predicted_times_text(const PredictedTimes& times, const PlacementGraph& graph,
                                 const CompilationConfig& config) {
  std::string out = "predicted run time " + ms_text(times.makespan_ms) + " (run overhead " + ms_text(times.overhead_ms) + ")\n";
  for (size_t d = 0; d < config.devices.size(); ++d)
    out += "  " + config.devices[d]->device_name() + ": compute " + ms_text(times.compute_ms[d]) +
           ", copies into it " + ms_text(times.copy_ms[d]) + "\n";
  return out + critical_path_text(critical_path_entries(times, graph)) + "\n";
}

std::vector<std::string> critical_path_entries(const PredictedTimes& times, const PlacementGraph& graph) {
  std::vector<std::string> out;
  for (PlaceId id : times.critical_path) {
    const PlaceNode& node = graph.nodes[size_t(id)];
    out.push_back(node.what);
    if (node.node && node.node->span().defined()) out.back() += " (" + node.node->span().to_string() + ")";
  }
  return out;
}

std::string critical_path_text(const std::vector<std::string>& entries) {
  std::string out = "  critical path:";
  const size_t n = entries.size(), shown = 6;
  for (size_t i = 0; i < n; ++i) {
    if (n > 2 * shown && i == shown) {
      out += " -> ... (" + std::to_string(n - 2 * shown) + " more)";
      i = n - shown;
    }
    out += std::string(i ? " ->" : "") + " " + entries[i];
  }
  return out;
}

}  // namespace switchyard
