// The element-wise epilogue of a oneDNN anchor as the primitive's own bias
// and post-ops. A per-output-channel add right after a convolution or a
// product becomes the primitive's bias argument: as a broadcast binary
// post-op on plain layouts it sends oneDNN to its slow paths (a 1x1 16->96
// convolution at 112x112: 68 ms against 1.1 ms). A residual add of a tensor
// of the destination's own shape becomes a sum post-op over a copy of the
// residual in the destination, which oneDNN's fast kernels all support.
#include <algorithm>
#include <cmath>
#include <map>

#include "backend/cpu_dnnl.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

PrimitivePostOp append(const std::string& algorithm, double alpha, double beta) {
  PrimitivePostOp post;
  post.algorithm = algorithm;
  post.alpha = float(alpha);
  post.beta = float(beta);
  return post;
}

// exp is not among them: oneDNN's clamps its argument with max/min first,
// so exp(NaN) came out inf (docs/operators.md, "Edge cases").
std::optional<PrimitivePostOp> eltwise(const std::string& op, const CallNode& call) {
  if (op == "nn.relu") return append("eltwise_relu", 0, 0);
  if (op == "tanh") return append("eltwise_tanh", 0, 0);
  if (op == "sigmoid") return append("eltwise_logistic", 0, 0);
  if (op == "log") return append("eltwise_log", 0, 0);
  if (op == "sqrt") return append("eltwise_sqrt", 0, 0);
  if (op == "abs") return append("eltwise_abs", 0, 0);
  if (op == "negative") return append("eltwise_linear", -1, 0);
  if (op == "rsqrt") return append("eltwise_pow", 1, -0.5);
  if (op == "clip") return append("eltwise_clip", call.attrs->get_float("a_min"), call.attrs->get_float("a_max"));
  return std::nullopt;
}

// Whether `e` is a float scalar constant within 1e-6 of `value`.
bool is_scalar(const Expr& e, double value) {
  const ConstantNode* c = as<ConstantNode>(e);
  return c && c->data.ndim() == 0 && c->data.dtype() == DType::kFloat32 &&
         std::abs(c->data.get_as_double(0) - value) <= 1e-6;
}

const CallNode* call_of(const Expr& e, const char* op) {
  const CallNode* c = as<CallNode>(e);
  return c && as<OpNode>(c->op) && as<OpNode>(c->op)->name == op && c->args.size() == 2 ? c : nullptr;
}

// The two arguments of a commutative call in the order that makes `first`
// accept the first of them, or nullptrs.
template <typename Accept>
std::pair<const Expr*, const Expr*> either_order(const CallNode* c, Accept first) {
  if (!c) return {nullptr, nullptr};
  if (first(c->args[0])) return {&c->args[0], &c->args[1]};
  if (first(c->args[1])) return {&c->args[1], &c->args[0]};
  return {nullptr, nullptr};
}

// Whether `e` is 1 + erf(x / sqrt(2)) (or x * (1 / sqrt(2))).
bool is_one_plus_erf_of(const Expr& e, const Expr& x) {
  auto [one, erf_term] = either_order(call_of(e, "add"), [](const Expr& a) { return is_scalar(a, 1.0); });
  if (!one) return false;
  const CallNode* erf = as<CallNode>(*erf_term);
  if (!erf || !as<OpNode>(erf->op) || as<OpNode>(erf->op)->name != "erf") return false;
  const Expr& scaled = erf->args[0];
  if (const CallNode* d = call_of(scaled, "divide")) return d->args[0].get() == x.get() && is_scalar(d->args[1], M_SQRT2);
  auto [factor, value] = either_order(call_of(scaled, "multiply"), [](const Expr& a) { return is_scalar(a, M_SQRT1_2); });
  return factor && value->get() == x.get();
}

// The x of an exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))), in the
// association orders exporters write it, or null.
const CallNode* gelu_argument(const CallNode* root) {
  const CallNode* outer = call_of(Expr(root), "multiply");
  auto [half, product] = either_order(outer, [](const Expr& a) { return is_scalar(a, 0.5); });
  if (half) {  // 0.5 * (x * (1 + erf))
    const CallNode* inner = call_of(*product, "multiply");
    for (int i = 0; inner && i < 2; ++i)
      if (is_one_plus_erf_of(inner->args[1 - i], inner->args[i])) return as<CallNode>(inner->args[i]);
    return nullptr;
  }
  for (int i = 0; outer && i < 2; ++i) {  // (0.5 * x) * (1 + erf(x / sqrt(2)))
    auto [scale, x] = either_order(call_of(outer->args[i], "multiply"), [](const Expr& a) { return is_scalar(a, 0.5); });
    if (scale && is_one_plus_erf_of(outer->args[1 - i], *x)) return as<CallNode>(*x);
  }
  return nullptr;
}

using Chain = std::vector<std::pair<const CallNode*, size_t>>;  // call, argument index of the chain

// The epilogue up to `root` as a chain of calls from the anchor, each
// reading the chain once plus parameters or scalar constants; nullopt when
// it is not one.
std::optional<Chain> epilogue_chain(const CpuKernel& k, const CallNode* root) {
  Chain chain;
  for (const CallNode* node = root; node != k.master;) {
    const CallNode* next = nullptr;
    size_t position = 0;
    for (size_t i = 0; i < node->args.size(); ++i) {
      const Expr& a = node->args[i];
      if (const CallNode* c = as<CallNode>(a)) {
        if (next) return std::nullopt;
        next = c;
        position = i;
      } else if (!is<VarNode>(a) && !(is<ConstantNode>(a) && as<ConstantNode>(a)->data.ndim() == 0)) {
        return std::nullopt;
      }
    }
    if (!next) return std::nullopt;
    chain.emplace_back(node, position);
    node = next;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// The dims, in the destination's view, of the other operand of a binary
// step of the chain: nullopt when it does not broadcast onto the destination.
std::optional<Dims> operand_dims(const CallNode& call, const Expr& side, const DnnlAnchor& operation) {
  const Dims& out = shape_of(Expr(&call));
  Dims side_shape = shape_of(side);
  if (as<OpNode>(call.op)->name == "nn.bias_add") {
    int64_t axis = call.attrs->get_int("axis");
    if (axis < 0) axis += int64_t(out.size());
    side_shape.assign(out.size(), 1);
    side_shape[size_t(axis)] = out[size_t(axis)];
  } else {
    if (side_shape.size() > out.size()) return std::nullopt;
    side_shape.insert(side_shape.begin(), out.size() - side_shape.size(), 1);
  }
  return operation.to_destination(side_shape);
}

// The primitive's bias dims when `call` (the chain's first step) adds a
// per-output-channel vector parameter, else nullopt.
std::optional<Dims> bias_dims(const CpuKernel& k, const CallNode& call, size_t position,
                              const DnnlAnchor& operation) {
  const std::string& op = as<OpNode>(call.op)->name;
  if (operation.spec.weights_input < 0 || call.args.size() != 2) return std::nullopt;
  if (!(op == "nn.bias_add" && position == 0) && op != "add") return std::nullopt;
  const Expr& side = call.args[1 - position];
  if (parameter_index(k, side) < 0 || dtype_of(side) != DType::kFloat32) return std::nullopt;
  std::optional<Dims> operand = operand_dims(call, side, operation);
  if (!operand || operand->size() < 2) return std::nullopt;
  // Channels: dim 1 of a convolution's destination, the last of a product's.
  size_t channel = operation.is_convolution ? 1 : operand->size() - 1;
  const Dims destination = *operation.to_destination(shape_of(Expr(&call)));
  for (size_t d = 0; d < operand->size(); ++d)
    if ((*operand)[d] != (d == channel ? destination[d] : 1)) return std::nullopt;
  // A convolution's bias is a vector; a matmul's has the destination's rank.
  if (operation.is_convolution) return Dims{destination[channel]};
  return operand;
}

}  // namespace

DnnlEpilogue map_dnnl_epilogue(const CpuKernel& k, const DnnlAnchor& operation, bool gelu_post_op) {
  DnnlEpilogue epilogue;
  epilogue.base = k.master;
  const CallNode* chain_root = k.root;
  const CallNode* gelu = gelu_argument(k.root);
  if (gelu && dtype_of(Expr(k.root)) == DType::kFloat32) chain_root = gelu;
  epilogue.post_ops_root = gelu_post_op ? k.root : chain_root;
  std::optional<Chain> chain = epilogue_chain(k, chain_root);
  if (!chain) return epilogue;
  size_t first = 0;
  if (!chain->empty() && dtype_of(Expr(chain->front().first)) == DType::kFloat32)
    if (std::optional<Dims> bias = bias_dims(k, *chain->front().first, chain->front().second, operation)) {
      const CallNode* call = chain->front().first;
      epilogue.base = call;
      epilogue.bias_input = parameter_index(k, call->args[1 - chain->front().second]);
      epilogue.bias_dims = *bias;
      first = 1;
    }
  std::vector<PrimitivePostOp> post_ops;
  // Not maximum or minimum: oneDNN's binary_max and binary_min lose a NaN
  // of the anchor's result (docs/operators.md, "Edge cases").
  static const std::map<std::string, std::string> binary = {
      {"add", "binary_add"}, {"nn.bias_add", "binary_add"}, {"multiply", "binary_mul"}, {"subtract", "binary_sub"},
      {"divide", "binary_div"}};
  bool summed = false;
  for (size_t step = first; step < chain->size(); ++step) {
    auto [call, position] = (*chain)[step];
    const std::string& op = as<OpNode>(call->op)->name;
    if (dtype_of(Expr(call)) != DType::kFloat32) return epilogue;
    if (std::optional<PrimitivePostOp> e = eltwise(op, *call)) {
      post_ops.push_back(*e);
      continue;
    }
    auto it = binary.find(op);
    if (it == binary.end() || call->args.size() != 2) return epilogue;
    const Expr& side = call->args[1 - position];
    bool chain_first = position == 0;
    if (const ConstantNode* c = as<ConstantNode>(side)) {
      if (c->data.dtype() != DType::kFloat32) return epilogue;
      double s = c->data.get_as_double(0);
      auto linear = [](double alpha, double beta) { return append("eltwise_linear", alpha, beta); };
      if (op == "add") post_ops.push_back(linear(1, s));
      else if (op == "multiply") post_ops.push_back(linear(s, 0));
      else if (op == "subtract") post_ops.push_back(chain_first ? linear(1, -s) : linear(-1, s));
      else if (op == "divide" && chain_first && s != 0) post_ops.push_back(linear(1 / s, 0));
      else return epilogue;
      continue;
    }
    if (!chain_first && (op == "subtract" || op == "divide" || op == "nn.bias_add")) return epilogue;
    if (dtype_of(side) != DType::kFloat32) return epilogue;
    int input = parameter_index(k, side);
    if (input < 0) return epilogue;
    // A residual of the destination's own shape: the primitive adds what the
    // destination already holds (one sum per chain, as oneDNN allows).
    if (op == "add" && !summed && shape_of(side) == shape_of(Expr(call))) {
      summed = true;
      PrimitivePostOp sum;
      sum.kind = PrimitivePostOp::Kind::kSum;
      sum.input = input;
      sum.operand = operation.spec.dst;  // the residual has the destination's shape and layout
      post_ops.push_back(sum);
      continue;
    }
    std::optional<Dims> operand = operand_dims(*call, side, operation);
    if (!operand) return epilogue;
    PrimitivePostOp binary_op;
    binary_op.kind = PrimitivePostOp::Kind::kBinary;
    binary_op.algorithm = it->second;
    binary_op.input = input;
    binary_op.operand = {*operand, dense_strides(*operand)};
    post_ops.push_back(binary_op);
  }
  if (chain_root != k.root && gelu_post_op) post_ops.push_back(append("eltwise_gelu_erf", 0, 0));
  epilogue.post_ops = post_ops;
  return epilogue;
}

}  // namespace switchyard
