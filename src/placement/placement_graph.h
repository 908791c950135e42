// The placement problem extracted from a module: "place nodes" (each runs on
// one device: an operator call, a parameter, a function result, an if, a
// wish), the tensor values they produce and the place nodes that consume them.
// A value consumed on a device other than its producer's costs one copy per
// destination device. Hard facts fix some place nodes; ties force two place
// nodes onto the same device (a device_copy's source and its input's
// producer, function values that flow into each other).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/compilation_config.h"
#include "ir/module.h"
#include "support/shared_fields.h"

namespace switchyard {

using PlaceId = int32_t;
using ValueId = int32_t;

// Why a place node is where it is.
struct PlacementReason {
  enum class Kind { kNone, kWish, kRule, kDefault, kHost, kOptimizer, kFollows, kFallback } kind = Kind::kNone;
  std::string text;          // human-readable, e.g. "wish on_device(device=\"cpu:1\") at f.sy:9:8"
  Span span;                 // the deciding wish or node
  PlaceId follows = -1;      // kFollows: the neighbour it was propagated from
};

struct PlaceNode {
  std::string what;                       // "nn.dense", "parameter %x", "result of @main", ...
  Expr node;                              // the IR node it stands for (may be null)
  const VirtualDevice* fixed = nullptr;   // hard fact, resolved against the config
  PlacementReason reason;                 // for fixed nodes: the fact
};

struct PlaceValue {
  PlaceId producer = -1;  // -1: a constant (materialized wherever consumed, never copied)
  int64_t bytes = 0;
  Expr expr;              // the expression whose value this is (for spans of copies)
  std::vector<PlaceId> consumers;
};

struct FunctionDomain;

// Structured values of an expression: one value per tensor leaf, one domain
// per tuple field, and for function-typed expressions the function's domain.
// Fields are shared, so the domain of every nested tuple and projection is
// kept per expression in linear memory.
struct Domain {
  ValueId value = -1;                        // tensor leaf
  SharedFields<Domain> fields;               // tuple
  std::shared_ptr<FunctionDomain> function;  // function-typed
  bool is_leaf() const { return value >= 0; }
  void leaves(std::vector<ValueId>* out) const;
};

// Where a function's parameters arrive and its result is produced.
struct FunctionDomain {
  std::vector<PlaceId> param_nodes;   // -1 for function-typed parameters
  std::vector<Domain> param_domains;  // the values each parameter yields inside the body
  // One node per tensor leaf of the result, so a tuple result may keep its
  // fields on different devices without copies.
  std::vector<PlaceId> result_nodes;
  Domain result_domain;               // for function-typed results
};

struct PlacementGraph {
  std::vector<PlaceNode> nodes;
  std::vector<PlaceValue> values;
  // Ties: pairs of place nodes that must share a device, with the reason.
  struct Tie {
    PlaceId a, b;
    std::string why;
  };
  std::vector<Tie> ties;

  // Lookups from IR nodes (by pointer, into the module the graph was built from).
  std::unordered_map<const ExprNode*, Domain> domains;       // every expression
  std::unordered_map<const ExprNode*, PlaceId> place_of;     // op calls, params, ifs, wishes
  std::unordered_map<const ExprNode*, PlaceId> if_condition;  // if -> the host node reading its condition

  PlaceId add_node(std::string what, Expr node);
  ValueId add_value(PlaceId producer, int64_t bytes, Expr expr);
};

// Builds the graph. Fixes nodes from wishes (parameter/result devices,
// on_device, device_copy, devices already set on calls or let variables) and
// the host for if conditions; wishes are resolved against `config` and an
// unknown device is an Error(kPlacement) naming the wish's span.
PlacementGraph build_placement_graph(const IRModule& mod, const CompilationConfig& config);

}  // namespace switchyard
