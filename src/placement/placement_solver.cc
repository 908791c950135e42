// Components of tied place nodes, conflict reports, min-cut placement and
// reasons.
#include "placement/placement_solver.h"

#include <algorithm>
#include <deque>
#include <set>

#include "placement/latency_solver.h"
#include "placement/min_cut.h"
#include "support/error.h"

namespace switchyard {

namespace {

// Cost units: bytes dominate, then the number of copies, then (in
// total_cost, and as the cut's tie-break) the preference for the default device.
constexpr Capacity kByteUnit = Capacity(1) << 44;
constexpr Capacity kCopyUnit = Capacity(1) << 22;
constexpr Capacity kPreferenceUnit = 1;

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i) parent[i] = int(i);
  }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
};

std::string describe(const PlaceNode& n) {
  std::string s = n.what;
  if (n.node && n.node->span().defined()) s += " (" + n.node->span().to_string() + ")";
  return s;
}

class Solver {
 public:
  Solver(const PlacementGraph& g, const CompilationConfig& config, const LatencyCosts* latency)
      : g_(g), config_(config), latency_(latency), uf_(g.nodes.size()), comp_fixed_(g.nodes.size(), nullptr) {}

  PlacementSolution run() {
    merge_ties();
    build_component_values();
    std::set<const VirtualDevice*> fixed_devices;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].fixed) fixed_devices.insert(g_.nodes[i].fixed);

    assignment_.assign(g_.nodes.size(), nullptr);
    initial_assignment();
    if (fixed_devices.size() >= 2) optimize(fixed_devices);
    PlacementSolution sol;
    if (latency_) sol.predicted_ms = optimize_latency(&sol.search);

    sol.device.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) sol.device[i] = assignment_[uf_.find(int(i))];
    explain(&sol);
    auto [bytes, copies] = placement_cost(g_, sol.device);
    sol.bytes_copied = bytes;
    sol.copies = copies;
    return sol;
  }

 private:
  // Hard equalities: merge tied nodes; two different fixed devices in one
  // component is a conflict between hard facts.
  void merge_ties() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) comp_fixed_[i] = g_.nodes[i].fixed;
    std::vector<int> fixed_witness(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) fixed_witness[i] = int(i);
    for (const auto& t : g_.ties) {
      int a = uf_.find(t.a), b = uf_.find(t.b);
      if (a == b) continue;
      const VirtualDevice* fa = comp_fixed_[a];
      const VirtualDevice* fb = comp_fixed_[b];
      if (fa && fb && fa != fb) report_conflict(fixed_witness[a], fixed_witness[b]);
      uf_.parent[b] = a;
      if (!fa && fb) {
        comp_fixed_[a] = fb;
        fixed_witness[a] = fixed_witness[b];
      }
    }
  }

  [[noreturn]] void report_conflict(int x, int y) {
    // The path of tied nodes between the two facts, by breadth-first search.
    std::vector<std::vector<std::pair<int, const std::string*>>> adj(g_.nodes.size());
    for (const auto& t : g_.ties) {
      adj[t.a].push_back({t.b, &t.why});
      adj[t.b].push_back({t.a, &t.why});
    }
    std::vector<int> prev(g_.nodes.size(), -2);
    std::vector<const std::string*> via(g_.nodes.size(), nullptr);
    std::deque<int> q{x};
    prev[x] = -1;
    while (!q.empty() && prev[y] == -2) {
      int u = q.front();
      q.pop_front();
      for (auto [v, why] : adj[u])
        if (prev[v] == -2) {
          prev[v] = u;
          via[v] = why;
          q.push_back(v);
        }
    }
    const PlaceNode& nx = g_.nodes[x];
    const PlaceNode& ny = g_.nodes[y];
    std::string msg = "conflicting placement wishes:\n  - " + nx.reason.text + "\n  - " + ny.reason.text +
                      "\n  they force the same value onto both devices; path:";
    std::vector<int> path;
    for (int v = y; v >= 0; v = prev[v]) path.push_back(v);
    std::reverse(path.begin(), path.end());
    for (int v : path) {
      msg += "\n    " + describe(g_.nodes[v]);
      if (via[v]) msg += "  [" + *via[v] + "]";
    }
    throw Error(ErrorKind::kPlacement, msg, nx.reason.span.defined() ? nx.reason.span : ny.reason.span);
  }

  // Per value: producer component and distinct consumer components.
  void build_component_values() {
    comp_values_.resize(g_.values.size());
    neighbours_.assign(g_.nodes.size(), {});
    for (size_t v = 0; v < g_.values.size(); ++v) {
      const PlaceValue& pv = g_.values[v];
      ComponentValue& cv = comp_values_[v];
      cv.producer = pv.producer >= 0 ? uf_.find(pv.producer) : -1;
      for (PlaceId c : pv.consumers) {
        int cc = uf_.find(c);
        if (cc != cv.producer && std::find(cv.consumers.begin(), cv.consumers.end(), cc) == cv.consumers.end())
          cv.consumers.push_back(cc);
      }
      if (cv.producer >= 0)
        for (int cc : cv.consumers) {
          neighbours_[cv.producer].push_back(cc);
          neighbours_[cc].push_back(cv.producer);
        }
    }
  }

  // Every component starts on its fixed device, or on the nearest fixed
  // device by value edges, or on the default device. With at most one device
  // among the hard facts this is already optimal (nothing crosses).
  void initial_assignment() {
    std::deque<int> q;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      int c = uf_.find(int(i));
      if (c == int(i) && comp_fixed_[c]) {
        assignment_[c] = comp_fixed_[c];
        q.push_back(c);
      }
    }
    while (!q.empty()) {
      int u = q.front();
      q.pop_front();
      for (int v : neighbours_[u])
        if (!assignment_[v]) {
          assignment_[v] = assignment_[u];
          q.push_back(v);
        }
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (uf_.find(int(i)) == int(i) && !assignment_[i]) assignment_[i] = config_.default_device;
  }

  // Repeated two-device moves; with exactly two devices one move is the
  // exact optimum.
  void optimize(const std::set<const VirtualDevice*>& fixed_devices) {
    std::vector<const VirtualDevice*> devs(fixed_devices.begin(), fixed_devices.end());
    if (std::find(devs.begin(), devs.end(), config_.default_device) == devs.end() && devs.size() > 2)
      devs.push_back(config_.default_device);
    bool improved = true;
    for (int round = 0; round < 4 && improved; ++round) {
      improved = false;
      for (size_t i = 0; i < devs.size(); ++i)
        for (size_t j = i + 1; j < devs.size(); ++j) improved |= two_device_move(devs[i], devs[j]);
      if (devs.size() == 2) break;
    }
  }

  // The components are the groups; the current (bytes-optimal) assignment
  // is one starting point. Returns the predicted makespan.
  double optimize_latency(std::string* method) {
    ScheduleProblem problem = schedule_problem(g_, *latency_);
    LatencyGroups groups;
    std::vector<int> group_of_root(g_.nodes.size(), -1), start;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      int root = uf_.find(int(i));
      if (group_of_root[size_t(root)] < 0) {
        group_of_root[size_t(root)] = groups.num_groups();
        groups.fixed.push_back(comp_fixed_[size_t(root)] ? config_.index_of(comp_fixed_[size_t(root)]) : -1);
        groups.allowed.push_back(std::vector<char>(config_.devices.size(), 1));
        start.push_back(config_.index_of(assignment_[size_t(root)]));
      }
      int group = group_of_root[size_t(root)];
      groups.group_of_step.push_back(group);
      for (size_t d = 0; d < config_.devices.size(); ++d)
        if (problem.compute[i][d] == kCannotRun) groups.allowed[size_t(group)][d] = 0;
    }
    // A pinned group stays where it is pinned (an operator its target cannot
    // run was reported before planning).
    for (int group = 0; group < groups.num_groups(); ++group)
      if (groups.fixed[size_t(group)] >= 0) groups.allowed[size_t(group)][size_t(groups.fixed[size_t(group)])] = 1;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const auto& allowed = groups.allowed[size_t(groups.group_of_step[i])];
      if (std::find(allowed.begin(), allowed.end(), 1) == allowed.end())
        throw Error(ErrorKind::kPlacement,
                    "no device of the build can run every operator that must share a device with " + describe(g_.nodes[i]));
    }
    LatencyOptions options;
    options.default_device = config_.index_of(config_.default_device);
    LatencyPlan plan = minimise_makespan(problem, groups, {start}, options);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (uf_.find(int(i)) == int(i)) assignment_[i] = config_.devices[size_t(plan.step_device[i])];
    *method = plan.method;
    return plan.makespan;
  }

  Capacity total_cost() const {
    std::vector<const VirtualDevice*> dev(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) dev[i] = assignment_[const_cast<UnionFind&>(uf_).find(int(i))];
    auto [bytes, copies] = placement_cost(g_, dev);
    Capacity pref = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (const_cast<UnionFind&>(uf_).find(int(i)) == int(i) && !comp_fixed_[i] && assignment_[i] != config_.default_device)
        pref += kPreferenceUnit;
    return Capacity(bytes) * kByteUnit + Capacity(copies) * kCopyUnit + pref;
  }

  // Re-places every free component currently on a or b by minimum cuts
  // (source side = a), one per connected group of candidates: a chain cut
  // into many segments by wishes is many small problems, and Dinic on their
  // union would need a phase per distinct segment length. Returns whether the
  // total cost went down.
  bool two_device_move(const VirtualDevice* a, const VirtualDevice* b) {
    std::vector<int> ordinal(g_.nodes.size(), -1);
    std::vector<int> candidates;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (uf_.find(int(i)) == int(i) && !comp_fixed_[i] && (assignment_[i] == a || assignment_[i] == b)) {
        ordinal[i] = int(candidates.size());
        candidates.push_back(int(i));
      }
    if (candidates.empty()) return false;

    // Groups: candidates joined through a shared value.
    UnionFind groups(candidates.size());
    std::vector<int> value_group(comp_values_.size(), -1);
    for (size_t v = 0; v < comp_values_.size(); ++v) {
      const ComponentValue& cv = comp_values_[v];
      if (cv.producer < 0 || cv.consumers.empty()) continue;
      int first = ordinal[cv.producer];
      for (int c : cv.consumers) {
        int o = ordinal[c];
        if (o < 0) continue;
        if (first < 0) first = o;
        else groups.parent[groups.find(o)] = groups.find(first);
      }
      value_group[v] = first;
    }
    std::vector<std::vector<int>> members(candidates.size()), values(candidates.size());
    for (size_t o = 0; o < candidates.size(); ++o) members[groups.find(int(o))].push_back(int(o));
    for (size_t v = 0; v < comp_values_.size(); ++v)
      if (value_group[v] >= 0) values[groups.find(value_group[v])].push_back(int(v));

    Capacity before = total_cost();
    std::vector<const VirtualDevice*> saved = assignment_;
    std::vector<int> position(candidates.size(), -1);
    for (size_t root = 0; root < candidates.size(); ++root) {
      if (members[root].empty()) continue;
      for (size_t k = 0; k < members[root].size(); ++k) position[members[root][k]] = int(k) + 2;
      MinCut cut(int(members[root].size()) + 2);
      for (int v : values[root]) add_copy_terms(&cut, v, a, b, ordinal, position);
      // Ties go to the default device: the largest a-side when a is the default.
      cut.solve(kSource, kSink, /*prefer_source_side=*/config_.default_device == a);
      for (int o : members[root]) assignment_[candidates[o]] = cut.on_source_side(position[o]) ? a : b;
    }
    Capacity after = total_cost();
    if (after > before) {
      assignment_ = saved;
      return false;
    }
    return after < before;
  }

  static constexpr int kSource = 0, kSink = 1;

  // The cost of copying value v as cut edges: one copy to a when some
  // consumer is on a (source side) and the producer is not; the mirror for b.
  void add_copy_terms(MinCut* cut, int v, const VirtualDevice* a, const VirtualDevice* b,
                      const std::vector<int>& ordinal, const std::vector<int>& position) {
    enum class Side { kCandidate, kA, kB, kOther };
    auto side = [&](int comp) {
      if (ordinal[comp] >= 0) return Side::kCandidate;
      return assignment_[comp] == a ? Side::kA : assignment_[comp] == b ? Side::kB : Side::kOther;
    };
    const ComponentValue& cv = comp_values_[v];
    Capacity cost = Capacity(g_.values[v].bytes) * kByteUnit + kCopyUnit;
    Side ps = side(cv.producer);
    bool consumer_on_a = false, consumer_on_b = false;
    std::vector<int> cand_consumers;
    for (int c : cv.consumers) {
      Side s = side(c);
      if (s == Side::kCandidate) cand_consumers.push_back(position[ordinal[c]]);
      consumer_on_a |= s == Side::kA;
      consumer_on_b |= s == Side::kB;
    }
    int p = ps == Side::kCandidate ? position[ordinal[cv.producer]] : -1;
    if (ps != Side::kA && (consumer_on_a || !cand_consumers.empty())) {
      int to_a = cut->add_node();
      for (int w : cand_consumers) cut->add_edge(w, to_a, kInfiniteCapacity);
      if (consumer_on_a) cut->add_edge(kSource, to_a, kInfiniteCapacity);
      cut->add_edge(to_a, p >= 0 ? p : kSink, cost);
    }
    if (ps != Side::kB && (consumer_on_b || !cand_consumers.empty())) {
      int to_b = cut->add_node();
      for (int w : cand_consumers) cut->add_edge(to_b, w, kInfiniteCapacity);
      if (consumer_on_b) cut->add_edge(to_b, kSink, kInfiniteCapacity);
      cut->add_edge(p >= 0 ? p : kSource, to_b, cost);
    }
  }

  // Reasons: fixed nodes keep their fact; others follow a neighbour on the same
  // device with no copy between them (breadth-first from the facts), else
  // they were the optimiser's or the default's choice.
  void explain(PlacementSolution* sol) {
    sol->reason.assign(g_.nodes.size(), PlacementReason{});
    std::deque<int> q;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (g_.nodes[i].fixed) {
        sol->reason[i] = g_.nodes[i].reason;
        q.push_back(int(i));
      }
    }
    // Place-level adjacency through values (producer <-> consumer) on the same device.
    std::vector<std::vector<int>> adj(g_.nodes.size());
    for (const PlaceValue& v : g_.values) {
      if (v.producer < 0) continue;
      for (PlaceId c : v.consumers) {
        adj[v.producer].push_back(c);
        adj[c].push_back(v.producer);
      }
    }
    for (const auto& t : g_.ties) {
      adj[t.a].push_back(t.b);
      adj[t.b].push_back(t.a);
    }
    // Under the latency objective a free node is where the schedule is
    // shortest, not where a neighbour's wish pulled it.
    if (latency_) q.clear();
    while (!q.empty()) {
      int u = q.front();
      q.pop_front();
      for (int v : adj[u])
        if (sol->reason[v].kind == PlacementReason::Kind::kNone && sol->device[v] == sol->device[u]) {
          sol->reason[v] = PlacementReason{PlacementReason::Kind::kFollows, describe(g_.nodes[u]),
                                           g_.nodes[u].node ? g_.nodes[u].node->span() : Span(), u};
          q.push_back(v);
        }
    }
    bool anything_fixed = std::any_of(g_.nodes.begin(), g_.nodes.end(), [](auto& n) { return n.fixed; });
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (sol->reason[i].kind == PlacementReason::Kind::kNone) {
        if (latency_)
          sol->reason[i] = PlacementReason{PlacementReason::Kind::kOptimizer,
                                           sol->device[i] == config_.default_device
                                               ? "the optimiser found the shortest predicted run time with it here "
                                                 "(ties go to the default device)"
                                               : "the optimiser found the shortest predicted run time with it here",
                                           Span(), -1};
        else if (sol->device[i] == config_.default_device || !anything_fixed)
          sol->reason[i] = PlacementReason{PlacementReason::Kind::kDefault,
                                           "nothing constrains it: the default device " +
                                               config_.default_device->device_name(),
                                           Span(), -1};
        else
          sol->reason[i] = PlacementReason{PlacementReason::Kind::kOptimizer,
                                           latency_ ? "placed by the optimiser for the shortest predicted run time"
                                                    : "placed by the optimiser to move the fewest bytes between devices",
                                           Span(), -1};
      }
  }

  struct ComponentValue {
    int producer = -1;
    std::vector<int> consumers;
  };

  const PlacementGraph& g_;
  const CompilationConfig& config_;
  const LatencyCosts* latency_;
  UnionFind uf_;
  std::vector<const VirtualDevice*> comp_fixed_;
  std::vector<const VirtualDevice*> assignment_;
  std::vector<ComponentValue> comp_values_;
  std::vector<std::vector<int>> neighbours_;
};

}  // namespace

std::pair<int64_t, int64_t> placement_cost(const PlacementGraph& g, const std::vector<const VirtualDevice*>& device) {
  int64_t bytes = 0, copies = 0;
  std::vector<const VirtualDevice*> dests;
  for (const PlaceValue& v : g.values) {
    if (v.producer < 0) continue;
    dests.clear();
    for (PlaceId c : v.consumers) {
      const VirtualDevice* d = device[c];
      if (d != device[v.producer] && std::find(dests.begin(), dests.end(), d) == dests.end()) dests.push_back(d);
    }
    copies += int64_t(dests.size());
    bytes += int64_t(dests.size()) * v.bytes;
  }
  return {bytes, copies};
}

PlacementSolution solve_placement(const PlacementGraph& graph, const CompilationConfig& config,
                                  const LatencyCosts* latency) {
  return Solver(graph, config, latency).run();
}

}  // namespace switchyard
