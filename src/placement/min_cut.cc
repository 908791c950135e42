// Dinic's algorithm with an iterative blocking-flow search (no recursion on
// path length, which can be the length of a million-node chain).
#include "placement/min_cut.h"

#include <algorithm>
#include <deque>

namespace switchyard {

MinCut::MinCut(int num_nodes) : first_edge_(num_nodes, -1) {}

int MinCut::add_node() {
  first_edge_.push_back(-1);
  return int(first_edge_.size()) - 1;
}

void MinCut::add_edge(int from, int to, Capacity capacity) {
  if (from == to || capacity <= 0) return;
  edges_.push_back({to, first_edge_[from], capacity});
  first_edge_[from] = int(edges_.size()) - 1;
  edges_.push_back({from, first_edge_[to], 0});
  first_edge_[to] = int(edges_.size()) - 1;
}

bool MinCut::build_levels(int source, int sink) {
  level_.assign(first_edge_.size(), -1);
  std::deque<int> queue{source};
  level_[source] = 0;
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    for (int e = first_edge_[u]; e != -1; e = edges_[e].next)
      if (edges_[e].residual > 0 && level_[edges_[e].to] < 0) {
        level_[edges_[e].to] = level_[u] + 1;
        queue.push_back(edges_[e].to);
      }
  }
  return level_[sink] >= 0;
}

// Finds augmenting paths in the level graph with an explicit stack of edges.
Capacity MinCut::push(int source, int sink) {
  Capacity total = 0;
  std::vector<int> path;  // edge indices from source
  int u = source;
  while (true) {
    if (u == sink) {
      Capacity bottleneck = kInfiniteCapacity * 2;
      for (int e : path) bottleneck = std::min(bottleneck, edges_[e].residual);
      for (int e : path) {
        edges_[e].residual -= bottleneck;
        edges_[e ^ 1].residual += bottleneck;
      }
      total += bottleneck;
      path.clear();
      u = source;
      continue;
    }
    int& e = cursor_[u];
    while (e != -1 && !(edges_[e].residual > 0 && level_[edges_[e].to] == level_[u] + 1)) e = edges_[e].next;
    if (e != -1) {
      path.push_back(e);
      u = edges_[e].to;
      continue;
    }
    // Dead end: retreat.
    if (u == source) break;
    level_[u] = -1;
    int back = path.back();
    path.pop_back();
    u = edges_[back ^ 1].to;
    cursor_[u] = edges_[cursor_[u]].next;
  }
  return total;
}

Capacity MinCut::solve(int source, int sink, bool prefer_source_side) {
  Capacity flow = 0;
  while (build_levels(source, sink)) {
    cursor_ = first_edge_;
    flow += push(source, sink);
    if (flow >= kInfiniteCapacity) break;
  }
  source_side_.assign(first_edge_.size(), 0);
  if (!prefer_source_side) {
    // Smallest source side: what the source still reaches in the residual graph.
    std::vector<int> stack{source};
    source_side_[source] = 1;
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      for (int e = first_edge_[u]; e != -1; e = edges_[e].next)
        if (edges_[e].residual > 0 && !source_side_[edges_[e].to]) {
          source_side_[edges_[e].to] = 1;
          stack.push_back(edges_[e].to);
        }
    }
    return flow;
  }
  // Largest source side: everything that cannot reach the sink in the
  // residual graph (searched backwards from the sink).
  std::vector<char> reaches_sink(first_edge_.size(), 0);
  std::vector<int> stack{sink};
  reaches_sink[sink] = 1;
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    for (int e = first_edge_[v]; e != -1; e = edges_[e].next) {
      int u = edges_[e].to;  // edge e goes v -> u; its partner e ^ 1 goes u -> v
      if (edges_[e ^ 1].residual > 0 && !reaches_sink[u]) {
        reaches_sink[u] = 1;
        stack.push_back(u);
      }
    }
  }
  for (size_t i = 0; i < first_edge_.size(); ++i) source_side_[i] = !reaches_sink[i];
  return flow;
}

}  // namespace switchyard
