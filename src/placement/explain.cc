// Reason chains and the cost of the alternative, for `switchyard explain`.
#include "placement/explain.h"

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
  if (!g.nodes[id].fixed) {
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
