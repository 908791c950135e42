// Converters of ONNX's control flow: If, Scan and Loop, whose bodies are
// subgraphs (subgraph.h). An If whose condition is known at import is its
// branch; otherwise both branches are converted and become the IR's `if`,
// which the entry function evaluates on the host (the branches must then
// agree on their outputs' types). Scan and Loop are unrolled into the graph:
// the body is converted once per iteration, the loop-carried values
// threaded from one iteration's outputs to the next one's inputs, and the
// per-iteration outputs stacked. That needs the iteration count at import
// (a sequence's length; a trip count and conditions that fold to
// constants); a loop whose count or shapes depend on data is refused.
#include <algorithm>

#include "frontend/onnx/converters.h"
#include "frontend/onnx/subgraph.h"

namespace switchyard {

namespace {

// Unrolling stops here (body nodes times iterations), so a long or endless
// loop is refused instead of growing the graph without bound.
constexpr int64_t kMostUnrolledNodes = 200000;

void check_unroll_budget(NodeContext& c, const sy_onnx::GraphProto& body, int64_t iterations) {
  int64_t nodes = std::max<int64_t>(body.node_size(), 1);
  if (iterations > kMostUnrolledNodes / nodes)
    c.fail("unrolling " + std::to_string(iterations) + " iterations of a " + std::to_string(body.node_size()) +
           "-node body exceeds " + std::to_string(kMostUnrolledNodes) + " nodes");
}

std::string type_text(const Expr& e) { return type_to_string(e->checked_type()); }

Expr index_scalar(NodeContext& c, int64_t index) {
  NDArray value(DType::kInt64, {});
  *value.as<int64_t>() = index;
  return c.constant(std::move(value));
}

// `values` (each of one shape) stacked along a new axis `axis`.
Expr stack(NodeContext& c, const std::vector<Expr>& values, int64_t axis, const std::string& what) {
  std::vector<Expr> expanded;
  for (const Expr& v : values) {
    if (type_text(v) != type_text(values.front()))
      c.fail(what + " changes type between iterations (" + type_text(values.front()) + ", then " + type_text(v) +
             "); stacking needs one shape");
    expanded.push_back(c.call("expand_dims", {v}, {{"axis", axis}}));
  }
  if (expanded.size() == 1) return expanded.front();
  return c.call("concatenate", {c.tuple(expanded)}, {{"axis", axis}});
}

// ---- If ----------------------------------------------------------------------

void convert_if(NodeContext& c) {
  const TensorTypeNode& cond_type = c.input_type(0);
  if (cond_type.dtype != DType::kBool || cond_type.numel() != 1)
    c.fail("the condition must be one bool, got " + type_to_string(c.input(0)->checked_type()));
  const sy_onnx::GraphProto& then_graph = c.attr_graph("then_branch");
  const sy_onnx::GraphProto& else_graph = c.attr_graph("else_branch");
  if (const NDArray* known = c.constant_input(0)) {
    std::vector<Expr> outputs = convert_subgraph(c, known->get_as_double(0) != 0 ? then_graph : else_graph, {});
    if (outputs.size() != c.output_count())
      c.fail("the branch has " + std::to_string(outputs.size()) + " outputs; the node has " +
             std::to_string(c.output_count()));
    for (size_t i = 0; i < outputs.size(); ++i) c.set_output(i, outputs[i]);
    return;
  }
  std::vector<Expr> then_outputs = convert_subgraph(c, then_graph, {});
  std::vector<Expr> else_outputs = convert_subgraph(c, else_graph, {});
  if (then_outputs.size() != c.output_count() || else_outputs.size() != c.output_count())
    c.fail("the branches have " + std::to_string(then_outputs.size()) + " and " + std::to_string(else_outputs.size()) +
           " outputs; the node has " + std::to_string(c.output_count()));
  for (size_t i = 0; i < then_outputs.size(); ++i)
    if (type_text(then_outputs[i]) != type_text(else_outputs[i]))
      c.fail("output " + std::to_string(i) + " is " + type_text(then_outputs[i]) + " in then_branch and " +
             type_text(else_outputs[i]) + " in else_branch; with a condition known only at run time the branches " +
             "must give the same types");
  Expr cond = reshape_to(c, c.input(0), {});
  Expr then_value = then_outputs.size() == 1 ? then_outputs[0] : c.tuple(then_outputs);
  Expr else_value = else_outputs.size() == 1 ? else_outputs[0] : c.tuple(else_outputs);
  Expr result = make_if(cond, then_value, else_value, {.span = c.span(), .checked_type = then_value->checked_type()});
  if (then_outputs.size() == 1) return c.set_output(0, result);
  for (size_t i = 0; i < then_outputs.size(); ++i)
    c.set_output(i, make_tuple_get_item(result, int(i), {.span = c.span(), .checked_type = then_outputs[i]->checked_type()}));
}

// ---- Scan --------------------------------------------------------------------

struct ScanLayout {
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

struct ScanResult {
  std::vector<Expr> states;
  std::vector<Expr> outputs;
};

// The body run over the scan inputs' sequence (of one length along their
// axes), states threaded through; the scan outputs stacked.
ScanResult unroll_scan(NodeContext& c, const sy_onnx::GraphProto& body, std::vector<Expr> states,
                       const std::vector<Expr>& scans, const ScanLayout& layout) {
  int64_t length = -1;
  for (size_t j = 0; j < scans.size(); ++j) {
    const std::vector<int64_t>& shape = static_shape_of(scans[j]);
    int64_t axis = normalize_axis(c, layout.input_axes[j], int64_t(shape.size()), "scan_input_axes entry");
    if (length >= 0 && shape[size_t(axis)] != length)
      c.fail("the scan inputs' sequences differ in length (" + std::to_string(length) + " and " +
             std::to_string(shape[size_t(axis)]) + ")");
    length = shape[size_t(axis)];
  }
  if (length < 1) c.fail("a scan over an empty sequence is not supported");
  check_unroll_budget(c, body, length);
  size_t output_count = size_t(body.output_size()) - states.size();
  std::vector<std::vector<Expr>> per_iteration(output_count);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Expr> inputs = states;
    for (size_t j = 0; j < scans.size(); ++j) {
      int64_t axis = normalize_axis(c, layout.input_axes[j], tensor_type_of(scans[j]).ndim());
      int64_t position = layout.input_directions[j] ? length - 1 - t : t;
      inputs.push_back(c.call("take", {scans[j], index_scalar(c, position)}, {{"axis", axis}}));
    }
    std::vector<Expr> outputs = convert_subgraph(c, body, inputs);
    std::copy(outputs.begin(), outputs.begin() + int64_t(states.size()), states.begin());
    for (size_t k = 0; k < output_count; ++k) per_iteration[k].push_back(outputs[states.size() + k]);
  }
  ScanResult result{states, {}};
  for (size_t k = 0; k < output_count; ++k) {
    std::vector<Expr>& values = per_iteration[k];
    if (layout.output_directions[k]) std::reverse(values.begin(), values.end());
    int64_t rank = tensor_type_of(values.front()).ndim() + 1;
    int64_t axis = normalize_axis(c, layout.output_axes[k], rank, "scan_output_axes entry");
    result.outputs.push_back(stack(c, values, axis, "scan output " + std::to_string(k)));
  }
  return result;
}

// A per-input or per-output attribute list: `count` zeros when absent.
std::vector<int64_t> scan_list(NodeContext& c, const std::string& name, size_t count) {
  std::vector<int64_t> values = c.attr_ints(name, std::vector<int64_t>(count, 0));
  if (values.size() != count)
    c.fail(name + " has " + std::to_string(values.size()) + " entries for " + std::to_string(count) + " values");
  return values;
}

// Scan from 9: inputs are the states then the scan inputs, along any axis.
void convert_scan(NodeContext& c) {
  const sy_onnx::GraphProto& body = c.attr_graph("body");
  int64_t scan_count = c.attr_int("num_scan_inputs");
  int64_t state_count = int64_t(c.input_count()) - scan_count;
  int64_t output_count = int64_t(body.output_size()) - state_count;
  if (scan_count < 1 || state_count < 0 || output_count < 0)
    c.fail("num_scan_inputs " + std::to_string(scan_count) + " does not fit " + std::to_string(c.input_count()) +
           " inputs and a body of " + std::to_string(body.output_size()) + " outputs");
  ScanLayout layout{scan_list(c, "scan_input_axes", size_t(scan_count)),
                    scan_list(c, "scan_input_directions", size_t(scan_count)),
                    scan_list(c, "scan_output_axes", size_t(output_count)),
                    scan_list(c, "scan_output_directions", size_t(output_count))};
  std::vector<Expr> states, scans;
  for (int64_t i = 0; i < int64_t(c.input_count()); ++i) (i < state_count ? states : scans).push_back(c.input(size_t(i)));
  ScanResult result = unroll_scan(c, body, states, scans, layout);
  for (size_t i = 0; i < result.states.size(); ++i) c.set_output(i, result.states[i]);
  for (size_t k = 0; k < result.outputs.size(); ++k) c.set_output(result.states.size() + k, result.outputs[k]);
}

// Scan-8: every input has a batch axis (0) before the sequence axis (1),
// each batch element scanned on its own; sequence_lens (input 0) is refused.
void convert_scan_8(NodeContext& c) {
  if (c.has_input(0)) c.fail("sequence_lens is not supported (every sequence must be full length)");
  const sy_onnx::GraphProto& body = c.attr_graph("body");
  int64_t scan_count = c.attr_int("num_scan_inputs");
  int64_t state_count = int64_t(c.input_count()) - 1 - scan_count;
  int64_t output_count = int64_t(body.output_size()) - state_count;
  if (scan_count < 1 || state_count < 0 || output_count < 0)
    c.fail("num_scan_inputs " + std::to_string(scan_count) + " does not fit the inputs and the body's outputs");
  ScanLayout layout{std::vector<int64_t>(size_t(scan_count), 0), scan_list(c, "directions", size_t(scan_count)),
                    std::vector<int64_t>(size_t(output_count), 0), std::vector<int64_t>(size_t(output_count), 0)};
  int64_t batch = -1;
  for (size_t i = 1; i < c.input_count(); ++i) {
    const std::vector<int64_t>& shape = c.input_shape(i);
    if (shape.empty() || (batch >= 0 && shape[0] != batch)) c.fail("the inputs must share a batch axis (0)");
    batch = shape[0];
  }
  if (batch < 1) c.fail("an empty batch is not supported");
  std::vector<std::vector<Expr>> per_batch(static_cast<size_t>(state_count + output_count));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Expr> states, scans;
    for (int64_t i = 0; i < state_count + scan_count; ++i)
      (i < state_count ? states : scans).push_back(c.call("take", {c.input(size_t(i + 1)), index_scalar(c, b)}, {{"axis", int64_t(0)}}));
    ScanResult result = unroll_scan(c, body, states, scans, layout);
    for (size_t i = 0; i < result.states.size(); ++i) per_batch[i].push_back(result.states[i]);
    for (size_t k = 0; k < result.outputs.size(); ++k) per_batch[result.states.size() + k].push_back(result.outputs[k]);
  }
  for (size_t i = 0; i < per_batch.size(); ++i) c.set_output(i, stack(c, per_batch[i], 0, "output " + std::to_string(i)));
}

// ---- Loop --------------------------------------------------------------------

// A known bool: the loop's condition before or after an iteration.
bool known_condition(NodeContext& c, const Expr& value, const std::string& what) {
  const ConstantNode* known = as<ConstantNode>(value);
  if (!known || known->data.numel() != 1 || known->data.dtype() != DType::kBool)
    c.fail(what + " (" + type_text(value) + ") is known only at run time; unrolling the loop needs it at import");
  return known->data.get_as_double(0) != 0;
}

// Loop: inputs the trip count M and the condition (each optional, each
// needed at import), then the loop-carried values; the body maps (iteration,
// condition, carried...) to (condition, carried..., scan outputs...), the
// scan outputs stacked along a new first axis.
void convert_loop(NodeContext& c) {
  const sy_onnx::GraphProto& body = c.attr_graph("body");
  std::optional<int64_t> trips;
  if (c.has_input(0)) {
    if (!c.constant_input(0))
      c.fail("the trip count ('" + c.node().input(0) + "') is known only at run time; unrolling the loop needs it at import");
    std::vector<int64_t> m = c.constant_ints(0, "trip count");
    if (m.size() != 1) c.fail("the trip count must be one value");
    trips = std::max<int64_t>(m[0], 0);
  }
  bool given_condition = c.has_input(1);
  bool running = !given_condition || known_condition(c, c.input(1), "the condition ('" + c.node().input(1) + "')");
  std::vector<Expr> carried;
  for (size_t i = 2; i < c.input_count(); ++i) carried.push_back(c.input(i));
  int64_t scan_count = int64_t(body.output_size()) - 1 - int64_t(carried.size());
  if (scan_count < 0 || body.input_size() != int(carried.size()) + 2)
    c.fail("the body's inputs and outputs do not fit " + std::to_string(carried.size()) + " loop-carried values");
  int64_t most = kMostUnrolledNodes / std::max<int64_t>(body.node_size(), 1);
  std::vector<std::vector<Expr>> per_iteration(static_cast<size_t>(scan_count));
  int64_t iteration = 0;
  for (; running && (!trips || iteration < *trips); ++iteration) {
    if (iteration >= most) check_unroll_budget(c, body, trips ? *trips : iteration + 1);
    NDArray cond(DType::kBool, {});
    *cond.as<bool>() = true;
    std::vector<Expr> inputs = {index_scalar(c, iteration), c.constant(std::move(cond))};
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    std::vector<Expr> outputs = convert_subgraph(c, body, inputs);
    running = known_condition(c, outputs[0], "the condition after iteration " + std::to_string(iteration));
    // Without a condition input ONNX's specification ignores the body's
    // condition, while ONNX Runtime and the reference stop on it: refused
    // where the two differ.
    if (!running && !given_condition && (!trips || iteration + 1 < *trips))
      c.fail("the body's condition turns false after iteration " + std::to_string(iteration) +
             " of a loop without a condition input (ONNX's specification ignores it, ONNX Runtime stops)");
    std::copy(outputs.begin() + 1, outputs.begin() + 1 + int64_t(carried.size()), carried.begin());
    for (int64_t k = 0; k < scan_count; ++k) per_iteration[size_t(k)].push_back(outputs[size_t(1 + int64_t(carried.size()) + k)]);
  }
  if (iteration == 0 && scan_count > 0) c.fail("a loop of no iterations with scan outputs (of unknown shape) is not supported");
  for (size_t i = 0; i < carried.size(); ++i) c.set_output(i, carried[i]);
  for (int64_t k = 0; k < scan_count; ++k)
    c.set_output(carried.size() + size_t(k), stack(c, per_iteration[size_t(k)], 0, "scan output " + std::to_string(k)));
}

}  // namespace

void register_control_converters() {
  std::vector<int> control_versions = {1, 11, 13, 16, 19, 21};
  add_onnx_converter("If", control_versions, {{1, convert_if}});
  add_onnx_converter("Scan", {8, 9, 11, 16, 19, 21}, {{8, convert_scan_8}, {9, convert_scan}});
  add_onnx_converter("Loop", control_versions, {{1, convert_loop}});
}

}  // namespace switchyard
