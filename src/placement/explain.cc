// Reason chains and the cost of the alternative, for `switchyard explain`.
#include "placement/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

namespace switchyard {

namespace {

std::string where(const PlaceNode& n) {
  return n.node && n.node->span().defined() ? " (" + n.node->span().to_string() + ")" : "";
}

// The line of "%NAME = " in a text-IR source, or 0.
uint32_t binding_line(const std::string& source_text, const std::string& name) {
  std::istringstream in(source_text);
  std::string line;
  std::regex pattern("^\\s*" + std::regex_replace(name, std::regex("[%.]"), "\\$&") + "\\s*=");
  uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (std::regex_search(line, pattern)) return number;
  }
  return 0;
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", value);
  return text;
}

// The copies a node's own values need with `device` as planned: its inputs
// from other devices, and its results to each other device that reads them.
double copy_ms_for(const PlacementGraph& g, const LatencyCosts& costs, const CompilationConfig& config,
                   const std::vector<const VirtualDevice*>& device, PlaceId id) {
  const size_t here = size_t(config.index_of(device[size_t(id)]));
  double total = 0;
  for (const PlaceValue& v : g.values) {
    if (v.producer < 0) continue;
    if (v.producer == id) {
      std::vector<const VirtualDevice*> seen;
      for (PlaceId c : v.consumers)
        if (device[size_t(c)] != device[size_t(id)] && std::find(seen.begin(), seen.end(), device[size_t(c)]) == seen.end()) {
          seen.push_back(device[size_t(c)]);
          total += costs.copy[here][size_t(config.index_of(device[size_t(c)]))].time(v.bytes);
        }
    } else if (std::find(v.consumers.begin(), v.consumers.end(), id) != v.consumers.end() &&
               device[size_t(v.producer)] != device[size_t(id)]) {
      total += costs.copy[size_t(config.index_of(device[size_t(v.producer)]))][here].time(v.bytes);
    }
  }
  return total;
}

// " saves 0.8 ms of compute for 0.1 ms of copy" and the like: what the
// planned device gains (positive) or loses against another.
std::string trade_text(double compute_saved, double copy_saved) {
  const double tiny = 5e-4;  // below what ms() prints
  if (compute_saved > tiny && copy_saved < -tiny)
    return " saves " + ms(compute_saved) + " of compute for " + ms(-copy_saved) + " of copy";
  if (compute_saved < -tiny && copy_saved > tiny)
    return " saves " + ms(copy_saved) + " of copy for " + ms(-compute_saved) + " more compute";
  if (compute_saved >= -tiny && copy_saved >= -tiny)
    return " saves " + ms(std::max(0.0, compute_saved)) + " of compute and " + ms(std::max(0.0, copy_saved)) + " of copy";
  return " costs " + ms(-compute_saved) + " more compute and " + ms(-copy_saved) +
         " more copy (the devices' queues overlap better)";
}

// With the latency objective: the node's compute and copies here and on
// each other device, and the predicted run time either way.
std::string time_alternatives(const PlanResult& plan, PlaceId id, const CompilationConfig& config) {
  const PlacementGraph& g = plan.graph;
  const LatencyCosts& costs = *plan.latency;
  const std::vector<const VirtualDevice*>& planned = plan.solution.device;
  const VirtualDevice* here = planned[size_t(id)];
  const double compute_here = costs.compute[size_t(id)][size_t(config.index_of(here))];
  const double copies_here = copy_ms_for(g, costs, config, planned, id);
  const double makespan = predict_times(g, config, costs, planned).makespan_ms;
  std::string out;
  for (const VirtualDevice* other : config.devices) {
    if (other == here) continue;
    const double compute_there = costs.compute[size_t(id)][size_t(config.index_of(other))];
    if (compute_there == kCannotRun) {
      out += "  " + other->device_name() + " cannot run it\n";
      continue;
    }
    std::vector<const VirtualDevice*> moved = planned;
    moved[size_t(id)] = other;
    const double copies_there = copy_ms_for(g, costs, config, moved, id);
    const double makespan_there = predict_times(g, config, costs, moved).makespan_ms;
    out += "  on " + other->device_name() + " instead: compute " + ms(compute_there) + " (here " + ms(compute_here) +
           "), its copies " + ms(copies_there) + " (here " + ms(copies_here) + "); predicted run time " +
           ms(makespan_there) + " (planned " + ms(makespan) + ")\n";
    out += "  so " + here->device_name() + trade_text(compute_there - compute_here, copies_there - copies_here) +
           "; the predicted run time is " + ms(std::fabs(makespan_there - makespan)) +
           (makespan_there >= makespan ? " shorter" : " longer") + " with it here\n";
  }
  return out;
}

}  // namespace

std::vector<PlaceId> select_place_nodes(const PlacementGraph& graph, const std::string& name,
                                        const std::string& source_text) {
  std::vector<PlaceId> out;
  uint32_t line = 0;
  std::string file;
  if (!name.empty() && name[0] == '%') {
    line = binding_line(source_text, name);
    if (line == 0) {  // a parameter or let variable
      for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const Expr& n = graph.nodes[i].node;
        if (const VarNode* v = as<VarNode>(n); v && "%" + v->name_hint == name) out.push_back(PlaceId(i));
      }
      return out;
    }
  } else if (name.find_first_not_of("0123456789") == std::string::npos && !name.empty()) {
    line = uint32_t(std::stoul(name));
  } else if (size_t colon = name.rfind(':'); colon != std::string::npos &&
             name.find_first_not_of("0123456789", colon + 1) == std::string::npos && colon + 1 < name.size()) {
    file = name.substr(0, colon);
    line = uint32_t(std::stoul(name.substr(colon + 1)));
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Expr& n = graph.nodes[i].node;
    if (!n || !n->span().defined()) continue;
    for (const Span& s : n->span().parts()) {
      bool same_file = file.empty() || (s.source().size() >= file.size() &&
                                        s.source().compare(s.source().size() - file.size(), file.size(), file) == 0);
      bool hit = line ? s.line() == line && same_file : s.source() == name;
      if (hit && (out.empty() || out.back() != PlaceId(i))) out.push_back(PlaceId(i));
    }
  }
  return out;
}

namespace {

// " by placement rule 'node:...'" when a rule set the deciding call's device.
std::string rule_suffix(const PlaceNode& node, const std::vector<PlacementRule>& rules) {
  const CallNode* call = as<CallNode>(node.node);
  const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
  const PlacementRule* rule = op ? matching_rule(rules, op->name, call->span()) : nullptr;
  return rule ? " by placement rule '" + rule->text + "'" : "";
}

}  // namespace

std::string explain_place_node(const PlanResult& plan, PlaceId id, const CompilationConfig& config,
                               const std::vector<PlacementRule>& rules) {
  const PlacementGraph& g = plan.graph;
  const PlacementSolution& s = plan.solution;
  std::string out = g.nodes[id].what + where(g.nodes[id]) + " is placed on " + s.device[id]->device_name() + "\n";
  // Follow the chain of "follows" reasons back to the deciding fact.
  PlaceId cur = id;
  for (int steps = 0; steps < 64; ++steps) {
    const PlacementReason& r = s.reason[cur];
    bool first = cur == id;
    if (r.kind != PlacementReason::Kind::kFollows || r.follows < 0) {
      std::string by_rule = r.kind == PlacementReason::Kind::kRule ? rule_suffix(g.nodes[cur], rules) : "";
      out += (first ? "  because " : "  and that is because ") + r.text + by_rule + "\n";
      break;
    }
    out += (first ? "  because it follows " : "  which follows ") + r.text + "\n";
    cur = r.follows;
  }
  // What the other devices would cost, with everything else as planned.
  if (plan.latency) {
    out += time_alternatives(plan, id, config);
  } else if (!g.nodes[id].fixed) {
    auto [bytes, copies] = placement_cost(g, s.device);
    for (const VirtualDevice* other : config.devices) {
      if (other == s.device[id]) continue;
      std::vector<const VirtualDevice*> moved = s.device;
      moved[id] = other;
      auto [b, c] = placement_cost(g, moved);
      out += "  on " + other->device_name() + " instead, the program would copy " + std::to_string(b) +
             " bytes in " + plural(c, "copy", "copies") + " (planned: " + std::to_string(bytes) + " bytes in " +
             plural(copies, "copy", "copies") + ")\n";
    }
  }
  return out;
}

}  // namespace switchyard
