// Node and subgraph conversion in scopes (see subgraph.h).
#include "frontend/onnx/subgraph.h"

#include "frontend/onnx/symbolic_shapes.h"

#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_tensor.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

std::string node_label(const sy_onnx::NodeProto& node) {
  std::string name = node.name().empty() ? std::string("(unnamed)") : quoted_name(node.name());
  return name + " (" + clipped_text(node.op_type()) + ")";
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

}  // namespace

const Expr* OnnxScope::find(const std::string& name) const {
  for (const OnnxScope* s = this; s; s = s->outer) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return &it->second;
  }
  return nullptr;
}

void convert_onnx_node(const sy_onnx::NodeProto& node, int opset, const std::string& model_dir, const OnnxScope& scope) {
  Span span(node.name().empty() ? node.op_type() : node.name(), 0, 0);
  std::vector<Expr> inputs;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Expr());
      continue;
    }
    const Expr* value = scope.find(name);
    if (!value)
      throw Error(ErrorKind::kParse,
                  "node " + node_label(node) + " uses " + quoted_name(name) + ", which no earlier node or input defines",
                  span);
    inputs.push_back(*value);
  }
  std::optional<OnnxOperatorVersion> op;
  if (is_default_domain(node.domain())) op = find_onnx_converter(node.op_type(), opset);
  if (!op)
    throw Error(ErrorKind::kParse, "node " + node_label(node) + ": the operator is not supported" +
                                       (is_default_domain(node.domain()) ? "" : " (domain " + quoted_name(node.domain()) + ")"),
                span);
  if (!op->convert) throw Error(ErrorKind::kParse, "node " + node_label(node) + ": " + op->refusal, span);
  NodeContext ctx(node, span, std::move(inputs), opset, op->version, model_dir);
  ctx.set_scope(&scope);
  ctx.set_shape_values(scope.shape_values);
  if (!takes_symbolic_inputs(node.op_type())) ctx.refuse_symbolic_inputs();
  try {
    if (!convert_shape_value_node(ctx)) (*op->convert)(ctx);
  } catch (const Error& e) {
    // A relation's or type's error (a symbolic size asked for) names no node yet.
    if (e.kind() != ErrorKind::kType) throw;
    ctx.fail(e.message());
  }
  std::vector<std::string> unread = ctx.unread_attrs();
  if (!unread.empty()) ctx.fail("attribute " + quoted_name(unread.front()) + " is not supported (" + op->name + ")");
  for (size_t i : ctx.unread_inputs())
    ctx.fail("input " + std::to_string(i) + " (" + quoted_name(node.input(int(i))) + ") is not supported (" + op->name + ")");
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    if (!ctx.outputs()[size_t(i)])
      ctx.fail("output " + std::to_string(i) + " (" + quoted_name(node.output(i)) + ") is not supported");
    scope.values[node.output(i)] = ctx.outputs()[size_t(i)];
  }
}

std::vector<Expr> convert_subgraph(NodeContext& ctx, const sy_onnx::GraphProto& body, const std::vector<Expr>& inputs) {
  if (!ctx.scope()) ctx.fail("a subgraph needs the enclosing graph's values (internal error)");
  std::string graph = "subgraph " + quoted_name(body.name());
  if (body.input_size() != int(inputs.size()))
    ctx.fail(graph + " has " + std::to_string(body.input_size()) + " inputs; the operator gives it " +
             std::to_string(inputs.size()));
  std::unordered_map<std::string, Expr> values;
  for (const sy_onnx::TensorProto& init : body.initializer()) {
    try {
      values[init.name()] = make_constant(tensor_from_onnx(init, ctx.model_dir()), {.span = Span(init.name(), 0, 0)});
    } catch (const Error& e) {
      ctx.fail(graph + ": " + e.message());
    }
  }
  for (int i = 0; i < body.input_size(); ++i) values[body.input(i).name()] = inputs[size_t(i)];
  OnnxScope scope{values, ctx.scope(), ctx.scope()->shape_values};
  try {
    for (const sy_onnx::NodeProto& node : body.node()) convert_onnx_node(node, ctx.opset(), ctx.model_dir(), scope);
  } catch (const Error& e) {
    // Which subgraph the failing node is in: a body may be converted many times.
    throw Error(e.kind(), e.message() + " (in " + graph + " of node " + node_label(ctx.node()) + ")", e.span());
  }
  std::vector<Expr> outputs;
  for (const sy_onnx::ValueInfoProto& out : body.output()) {
    const Expr* value = scope.find(out.name());
    if (!value) ctx.fail(graph + " output " + quoted_name(out.name()) + " is never computed");
    outputs.push_back(*value);
  }
  return outputs;
}

}  // namespace switchyard
