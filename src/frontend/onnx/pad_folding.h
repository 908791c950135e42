// Zero padding folded into the window that reads it. PyTorch exports
// avg_pool2d(padding=p) with count_include_pad=True as Pad + AveragePool
// (Inception's pool branches), and TensorFlow's converters put an explicit
// Pad before Conv for "SAME" padding. Converted apart, the Pad becomes
// concatenations: a loop no library primitive takes, which keeps the
// activations around it dense (a reorder before it, a plain pool after).
// A constant-zero Pad of the spatial axes whose one reader is a Conv or an
// AveragePool is exactly that window's own zero padding (counted in the
// average, as count_include_pad=1 counts it), so the reader takes the Pad's
// input and the sum of both paddings, and the Pad is not converted.
#pragma once

#include <string>
#include <unordered_map>

#include "frontend/onnx/sy_onnx.pb.h"
#include "ir/expr.h"

namespace switchyard {

class PadFolding {
 public:
  // Counts every value's readers in `graph` (its nodes, nested graphs and outputs).
  explicit PadFolding(const sy_onnx::GraphProto& graph);

  // Whether `node`, a Pad, folds into its one reader (then it must not be
  // converted): `values` holds the constants converted so far, `opset` the
  // default domain's version.
  bool folds(const sy_onnx::NodeProto& node, int opset, const std::unordered_map<std::string, Expr>& values);

  // The node to convert for `node`: its rewrite where a Pad folded into it, else itself.
  const sy_onnx::NodeProto& node_to_convert(const sy_onnx::NodeProto& node) const;

 private:
  std::unordered_map<std::string, int> readers_;
  std::unordered_map<std::string, const sy_onnx::NodeProto*> reader_of_;  // a value's reader in the top graph
  std::unordered_map<const sy_onnx::NodeProto*, sy_onnx::NodeProto> rewritten_;
};

}  // namespace switchyard
