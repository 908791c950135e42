// What an operator converter sees of one ONNX node: its inputs as typed IR
// expressions (constants where the value is known at import), its
// attributes, and a builder that makes typed calls carrying the node's span
// and folds them when every argument is a constant. Folding is what turns
// shape-computing subgraphs (Shape -> Gather -> Concat -> Reshape) into
// static shapes.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/sy_onnx.pb.h"
#include "ir/expr.h"

namespace switchyard {

// Shape values over symbolic dimensions: an int64 value of 0 or 1
// dimensions computed from a symbolic shape (Shape of a (batch, 512)
// tensor, then Gather, Unsqueeze, Concat...), known at import as dimension
// expressions but not as numbers. Each is a placeholder expression, never
// part of the IR: a converter reads it by shape_value_input (Reshape's
// shape becomes a symbolic reshape); any other use of it is refused.
struct ShapeValueTable {
  std::map<const ExprNode*, std::pair<Expr, std::vector<DimExpr>>> values;
};

struct OnnxScope;  // subgraph.h

class NodeContext {
 public:
  // `inputs` are the node's inputs in order (null for an absent optional
  // one); `op_version` is the operator's version that the model's `opset`
  // selects (converters.h).
  NodeContext(const sy_onnx::NodeProto& node, Span span, std::vector<Expr> inputs, int opset, int op_version,
              const std::string& model_dir);

  const sy_onnx::NodeProto& node() const { return node_; }
  const Span& span() const { return span_; }
  int opset() const { return opset_; }
  int op_version() const { return op_version_; }
  const std::string& model_dir() const { return model_dir_; }
  // The named values the node can see, for converting its subgraphs
  // (subgraph.h); null when it was made without them.
  const OnnxScope* scope() const { return scope_; }
  void set_scope(const OnnxScope* scope) { scope_ = scope; }

  // Inputs. An absent optional input (empty name, or past the end) is null.
  // Every input the node has must be asked for (has_input or any accessor
  // below) by its converter, or the import fails naming it: an input of a
  // newer version (ReduceMean-18's axes at opset 13) is never ignored.
  size_t input_count() const { return inputs_.size(); }
  bool has_input(size_t i) const;
  const Expr& input(size_t i) const;                 // Error when absent
  const TensorTypeNode& input_type(size_t i) const;  // of a present input
  // The static shape; for a symbolic input, Error naming the node, the
  // input and its dimension ("<Op> with symbolic shapes is not supported
  // yet"), so a converter that reads numbers never guesses.
  const std::vector<int64_t>& input_shape(size_t i) const;
  // Every input's dimensions as expressions: what a symbolic-aware converter reads.
  const std::vector<DimExpr>& input_dims(size_t i) const { return input_type(i).dims; }
  DType input_dtype(size_t i) const { return input_type(i).dtype; }
  // The input's value when it is known at import (an initializer, a
  // Constant, or folded), else null.
  const NDArray* constant_input(size_t i) const;
  // The known value, or Error: `role` names it ("shape", "pads").
  const NDArray& require_constant(size_t i, const std::string& role) const;
  // A known integer input as int64 values.
  std::vector<int64_t> constant_ints(size_t i, const std::string& role) const;
  std::vector<double> constant_floats(size_t i, const std::string& role) const;

  // Attributes. Every attribute the node has must be read by its converter,
  // or the import fails naming it, so an unknown option is never ignored.
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const;
  float attr_float(const std::string& name, std::optional<float> fallback = std::nullopt) const;
  std::string attr_string(const std::string& name, std::optional<std::string> fallback = std::nullopt) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  std::vector<float> attr_floats(const std::string& name) const;
  NDArray attr_tensor(const std::string& name) const;
  const sy_onnx::GraphProto& attr_graph(const std::string& name) const;  // If's branches, Loop's and Scan's body
  // Attributes present on the node that no accessor asked for.
  std::vector<std::string> unread_attrs() const;
  // Inputs present on the node that no accessor asked for.
  std::vector<size_t> unread_inputs() const;

  // Shape values (ShapeValueTable). Input i's elements as dimension
  // expressions when it is a shape value or a known integer tensor of 0 or
  // 1 dimensions; nullopt otherwise.
  std::optional<std::vector<DimExpr>> shape_value_input(size_t i) const;
  bool is_shape_value(size_t i) const;
  // Fails naming the first input with a symbolic dimension, as input_shape
  // does, without marking any input read.
  void refuse_symbolic_inputs() const;
  // The dimensions of the value input i holds (a shape value's or a
  // tensor's), without refusing a shape value as input_type does.
  std::vector<int64_t> value_shape(size_t i) const;
  // An int64 value of `shape` ({} or {n}) holding `elements`: a constant
  // when every one is a number, else a shape value.
  Expr shape_value(const std::vector<DimExpr>& elements, const std::vector<int64_t>& shape);
  void set_shape_values(ShapeValueTable* table) { shape_values_ = table; }

  // Building. Each call is typed by its operator's relation (a type error
  // becomes an import error naming the node) and folded to a constant when
  // all arguments are constants and the result is not much larger.
  Expr call(const std::string& op, std::vector<Expr> args, std::vector<std::pair<std::string, AttrValue>> attrs = {});
  Expr constant(NDArray value);
  Expr scalar(double value, DType dtype);  // a 0-d constant
  Expr tuple(std::vector<Expr> fields);
  Expr tuple_item(const Expr& tuple, int index);

  // Outputs, in order; an output the node does not produce stays unset.
  void set_output(size_t i, Expr value);
  const std::vector<Expr>& outputs() const { return outputs_; }
  size_t output_count() const { return size_t(node_.output_size()); }
  bool output_used(size_t i) const { return int(i) < node_.output_size() && !node_.output(int(i)).empty(); }

  // Error(kParse) naming the node: "node 'conv1' (Conv): message".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const sy_onnx::AttributeProto* find_attr(const std::string& name) const;
  const sy_onnx::AttributeProto& require_attr(const std::string& name, int type) const;

  const sy_onnx::NodeProto& node_;
  Span span_;
  std::vector<Expr> inputs_;
  int opset_;
  int op_version_;
  std::string model_dir_;
  const OnnxScope* scope_ = nullptr;
  std::vector<Expr> outputs_;
  mutable std::set<std::string> read_attrs_;
  mutable std::vector<bool> read_inputs_;
  ShapeValueTable* shape_values_ = nullptr;
};

// The tensor type an imported expression was built with.
const TensorTypeNode& tensor_type_of(const Expr& e);
// Its static shape; Error(kType) naming the symbolic dimension when it has
// one (the node converting it adds its name), never an empty shape read as
// sizes.
const std::vector<int64_t>& static_shape_of(const Expr& e);

// A name from the model file, quoted for a message: at most a line's worth
// and valid UTF-8 (runtime/clipped_text.h), since a model may hold any bytes.
std::string quoted_name(const std::string& name);

}  // namespace switchyard
