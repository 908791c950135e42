// Minimum s-t cut by Dinic's max-flow algorithm, with 128-bit capacities so a
// cost can pack (bytes moved, copies, preference) lexicographically.
#pragma once

#include <cstdint>
#include <vector>

namespace switchyard {

using Capacity = __int128;
constexpr Capacity kInfiniteCapacity = Capacity(1) << 120;

class MinCut {
 public:
  explicit MinCut(int num_nodes);
  int add_node();
  // A directed edge: cut (counted) when `from` is on the source side and `to`
  // on the sink side.
  void add_edge(int from, int to, Capacity capacity);
  // Computes a minimum cut between `source` and `sink`; returns its capacity.
  // Among minimum cuts, the one with the largest source side when
  // `prefer_source_side`, else the one with the smallest (a tie-break that
  // needs no extra edges).
  Capacity solve(int source, int sink, bool prefer_source_side = false);
  // After solve: whether `node` is on the source side of the minimum cut.
  bool on_source_side(int node) const { return source_side_[node]; }
  int num_nodes() const { return int(first_edge_.size()); }

 private:
  struct Edge {
    int to;
    int next;
    Capacity residual;
  };
  bool build_levels(int source, int sink);
  Capacity push(int source, int sink);

  std::vector<int> first_edge_;
  std::vector<Edge> edges_;
  std::vector<int> level_, cursor_;
  std::vector<char> source_side_;
};

}  // namespace switchyard
