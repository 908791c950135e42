// Converting ONNX nodes in a scope of named values: the main graph's, and
// for the bodies of If, Loop and Scan (graph attributes) a subgraph's own
// names over its enclosing graph's, since a subgraph reads outer values by
// name. A body is converted once per use (each branch, each unrolled
// iteration), its nodes becoming IR expressions like the main graph's.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/onnx/node_context.h"

namespace switchyard {

struct OnnxScope {
  std::unordered_map<std::string, Expr>& values;  // the names this graph defines
  const OnnxScope* outer = nullptr;               // the enclosing graph's, for a subgraph
  // The shape values over symbolic dimensions (node_context.h); a
  // subgraph's scope shares its enclosing graph's.
  ShapeValueTable* shape_values = nullptr;
  // The value of `name` here or in an enclosing graph; null when undefined.
  const Expr* find(const std::string& name) const;
};

// Converts `node` by its operator's version at `opset`, reading its inputs
// from `scope` and defining its outputs there. Fails naming the node when it
// reads an undefined name, its operator is unknown or refused (the main
// graph's operators are checked all at once before, subgraphs' here), or the
// converter leaves an attribute, input or output unread.
void convert_onnx_node(const sy_onnx::NodeProto& node, int opset, const std::string& model_dir, const OnnxScope& scope);

// The outputs of `body`, a graph attribute of `ctx`'s node, with its inputs
// bound to `inputs` in order, converted in a scope over the node's.
std::vector<Expr> convert_subgraph(NodeContext& ctx, const sy_onnx::GraphProto& body, const std::vector<Expr>& inputs);

}  // namespace switchyard
