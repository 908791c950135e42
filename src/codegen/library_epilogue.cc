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
#include <set>

#include "codegen/library_anchor.h"
#include "op/elementwise_attrs.h"
#include "op/handles.h"
#include "op/norm_attrs.h"
#include "op/registry.h"
#include "support/error.h"
#include "targets/cpu/runtime/primitive_post_ops.h"

namespace switchyard {

namespace {

PrimitivePostOp append(const std::string& algorithm, double alpha, double beta) {
  PrimitivePostOp post;
  post.algorithm = algorithm;
  post.alpha = float(alpha);
  post.beta = float(beta);
  return post;
}

// Left to the loop after the primitive, where oneDNN departs from the
// interpreter (docs/operators.md, "Edge cases"): exp (it clamps its argument
// with max/min first, so exp(NaN) came out inf), sigmoid (0 for NaN in its
// GEMM-based convolution, and 0 for sigmoid(-100), a denormal), log
// (log(1) = -1.4e-6, where the loop's is exact) and rsqrt (its pow gave 0
// for -inf and +inf for -0).
std::optional<PrimitivePostOp> eltwise(const OpNode* op, const CallNode& call) {
  if (op == ops::relu()) return append("eltwise_relu", 0, 0);
  if (op == ops::tanh()) return append("eltwise_tanh", 0, 0);
  if (op == ops::sqrt()) return append("eltwise_sqrt", 0, 0);
  if (op == ops::abs()) return append("eltwise_abs", 0, 0);
  if (op == ops::negative()) return append("eltwise_linear", -1, 0);
  if (op == ops::clip()) {
    const ClipAttrs bounds = clip_attrs(*call.attrs);
    return append("eltwise_clip", bounds.a_min, bounds.a_max);
  }
  return std::nullopt;
}

// Whether `e` is a float scalar constant within 1e-6 of `value`.
bool is_scalar(const Expr& e, double value) {
  const ConstantNode* c = as<ConstantNode>(e);
  return c && c->data.ndim() == 0 && c->data.dtype() == DType::kFloat32 &&
         std::abs(c->data.get_as_double(0) - value) <= 1e-6;
}

const CallNode* call_of(const Expr& e, const OpNode* op) {
  const CallNode* c = as<CallNode>(e);
  return c && as<OpNode>(c->op) == op && c->args.size() == 2 ? c : nullptr;
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
  auto [one, erf_term] = either_order(call_of(e, ops::add()), [](const Expr& a) { return is_scalar(a, 1.0); });
  if (!one) return false;
  const CallNode* erf = as<CallNode>(*erf_term);
  if (!erf || !as<OpNode>(erf->op) || as<OpNode>(erf->op) != ops::erf()) return false;
  const Expr& scaled = erf->args[0];
  if (const CallNode* d = call_of(scaled, ops::divide())) return d->args[0].get() == x.get() && is_scalar(d->args[1], M_SQRT2);
  auto [factor, value] = either_order(call_of(scaled, ops::multiply()), [](const Expr& a) { return is_scalar(a, M_SQRT1_2); });
  return factor && value->get() == x.get();
}

// The x of an exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))), in the
// association orders exporters write it, or null.
const CallNode* gelu_argument(const CallNode* root) {
  const CallNode* outer = call_of(Expr(root), ops::multiply());
  auto [half, product] = either_order(outer, [](const Expr& a) { return is_scalar(a, 0.5); });
  if (half) {  // 0.5 * (x * (1 + erf))
    const CallNode* inner = call_of(*product, ops::multiply());
    for (int i = 0; inner && i < 2; ++i)
      if (is_one_plus_erf_of(inner->args[1 - i], inner->args[i])) return as<CallNode>(inner->args[i]);
    return nullptr;
  }
  for (int i = 0; outer && i < 2; ++i) {  // (0.5 * x) * (1 + erf(x / sqrt(2)))
    auto [scale, x] = either_order(call_of(outer->args[i], ops::multiply()), [](const Expr& a) { return is_scalar(a, 0.5); });
    if (scale && is_one_plus_erf_of(outer->args[1 - i], *x)) return as<CallNode>(*x);
  }
  return nullptr;
}

// The calls of the kernel's body after the anchor, each with how many times
// it is an argument and (for one use) the call reading it and where.
struct Readers {
  struct Use {
    int count = 0;
    const CallNode* reader = nullptr;
    size_t position = 0;
  };
  std::map<const CallNode*, Use> of;
  std::map<const CallNode*, std::vector<const CallNode*>> readers_of;  // each reading call once

  explicit Readers(const CpuKernel& k) {
    std::vector<const CallNode*> work{k.root};
    std::set<const CallNode*> seen{k.root};
    while (!work.empty()) {
      const CallNode* call = work.back();
      work.pop_back();
      if (call == k.master) continue;
      for (size_t i = 0; i < call->args.size(); ++i)
        if (const CallNode* c = as<CallNode>(call->args[i])) {
          std::vector<const CallNode*>& calls = readers_of[c];
          if (std::find(calls.begin(), calls.end(), call) == calls.end()) calls.push_back(call);
          Use& use = of[c];
          ++use.count;
          use.reader = call;
          use.position = i;
          if (seen.insert(c).second) work.push_back(c);
        }
    }
  }

  // The call reading `value` as its only use, where its other arguments
  // are parameters or scalar constants: the next step of a post-op chain.
  std::pair<const CallNode*, size_t> next_step(const CallNode* value) const {
    auto it = of.find(value);
    if (it == of.end() || it->second.count != 1) return {nullptr, 0};
    const CallNode* reader = it->second.reader;
    for (size_t j = 0; j < reader->args.size(); ++j) {
      const Expr& a = reader->args[j];
      bool leaf = is<VarNode>(a) || (is<ConstantNode>(a) && as<ConstantNode>(a)->data.ndim() == 0);
      if (j != it->second.position && !leaf) return {nullptr, 0};
    }
    return {reader, it->second.position};
  }
};

// Whether `value` is read once in the kernel, by `reader`.
bool read_only_by(const Readers& readers, const CallNode* value, const CallNode* reader) {
  auto it = readers.of.find(value);
  return it != readers.of.end() && it->second.count == 1 && it->second.reader == reader;
}

// Whether `gate` is HardSigmoid's clip(x * (1/6) + 0.5, 0, 1) of `x`, each
// step read only by the next, up to `product`.
bool is_hard_sigmoid_of(const Readers& readers, const CallNode* gate, const CallNode* x, const CallNode* product) {
  if (as<OpNode>(gate->op) != ops::clip() || gate->args.size() != 1) return false;
  const ClipAttrs bounds = clip_attrs(*gate->attrs);
  if (bounds.a_min != 0 || bounds.a_max != 1) return false;
  const CallNode* shifted = as<CallNode>(gate->args[0]);
  auto [half, scaled] = either_order(call_of(gate->args[0], ops::add()), [](const Expr& a) { return is_scalar(a, 0.5); });
  if (!half) return false;
  auto [sixth, input] =
      either_order(call_of(*scaled, ops::multiply()), [](const Expr& a) { return is_scalar(a, 1.0 / 6.0); });
  return sixth && input->get() == x && read_only_by(readers, gate, product) &&
         read_only_by(readers, shifted, gate) && read_only_by(readers, as<CallNode>(*scaled), shifted);
}

// The step after `x` when x gates itself, as the SiLU of EfficientNet
// (x * sigmoid(x): oneDNN's swish) and MobileNetV3's hardswish (x *
// HardSigmoid(x)) do: the product and its post-op. Without it the
// activation ran as a loop after the primitive, and the loop kept the
// primitive's result out of the layouts PlanLayouts plans (a reorder into
// and out of each convolution). oneDNN's sigmoid departs from the
// interpreter's on NaN and denormals (above); the product with x gives NaN
// for NaN either way, and the denormals it would scale stay below 1e-38.
std::optional<std::pair<const CallNode*, PrimitivePostOp>> self_gated_step(const Readers& readers, const CallNode* x) {
  auto it = readers.readers_of.find(x);
  if (it == readers.readers_of.end() || it->second.size() != 2 || readers.of.at(x).count != 2) return std::nullopt;
  for (const CallNode* product : it->second) {
    auto [value, gate_expr] = either_order(call_of(Expr(product), ops::multiply()),
                                           [&](const Expr& a) { return a.get() == x; });
    const CallNode* gate = gate_expr ? as<CallNode>(*gate_expr) : nullptr;
    if (!gate || dtype_of(Expr(product)) != DType::kFloat32) continue;
    if (as<OpNode>(gate->op) == ops::sigmoid() && gate->args.size() == 1 && gate->args[0].get() == x &&
        read_only_by(readers, gate, product))
      return std::make_pair(product, append("eltwise_swish", 1, 0));
    if (is_hard_sigmoid_of(readers, gate, x, product)) return std::make_pair(product, append("eltwise_hardswish", 0, 0));
  }
  return std::nullopt;
}

// The dims, in the destination's view, of the other operand of a binary
// step of the chain: nullopt when it does not broadcast onto the destination.
std::optional<Dims> operand_dims(const CallNode& call, const Expr& side, const DnnlAnchor& operation) {
  const Dims& out = shape_of(Expr(&call));
  Dims side_shape = shape_of(side);
  if (as<OpNode>(call.op) == ops::bias_add()) {
    int64_t axis = norm_attrs(*call.attrs).axis;
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
  const OpNode* op = as<OpNode>(call.op);
  if (operation.spec.weights_input < 0 || call.args.size() != 2) return std::nullopt;
  if (!(op == ops::bias_add() && position == 0) && op != ops::add()) return std::nullopt;
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

// A scalar constant as a linear post-op's parameter: finite, and of a
// magnitude whose products with another such stay finite, so that merging
// two linear steps (below) computes what the steps compute, up to rounding.
std::optional<double> linear_parameter(const Expr& side) {
  const ConstantNode* c = as<ConstantNode>(side);
  if (!c || c->data.ndim() != 0 || c->data.dtype() != DType::kFloat32) return std::nullopt;
  double value = c->data.get_as_double(0);
  if (!std::isfinite(value) || std::abs(value) > 0x1p60 || (value != 0 && std::abs(value) < 0x1p-60))
    return std::nullopt;
  return value;
}

// The post-op computing one step of the epilogue, `call` reading the chain
// at argument `position`: the one table of which element-wise operators
// become which oneDNN post-ops. nullopt for every other step; the chain
// then ends before it and a loop computes the rest.
std::optional<PrimitivePostOp> post_op_of(const CpuKernel& k, const CallNode& call, size_t position,
                                          const DnnlAnchor& operation, bool summed) {
  const OpNode* op = as<OpNode>(call.op);
  if (dtype_of(Expr(&call)) != DType::kFloat32) return std::nullopt;
  if (call.args.size() == 1) return eltwise(op, call);
  if (call.args.size() != 2) return std::nullopt;
  const Expr& side = call.args[1 - position];
  bool chain_first = position == 0;
  if (is<ConstantNode>(side)) {
    std::optional<double> s = linear_parameter(side);
    if (!s) return std::nullopt;
    auto linear = [](double alpha, double beta) { return append("eltwise_linear", alpha, beta); };
    if (op == ops::add()) return linear(1, *s);
    if (op == ops::multiply()) return linear(*s, 0);
    if (op == ops::subtract()) return chain_first ? linear(1, -*s) : linear(-1, *s);
    if (op == ops::divide() && chain_first && *s != 0 && std::isfinite(1 / *s)) return linear(1 / *s, 0);
    return std::nullopt;
  }
  // Not maximum or minimum: oneDNN's binary_max and binary_min lose a NaN
  // of the anchor's result (docs/operators.md, "Edge cases").
  const std::pair<const OpNode*, const char*> binary[] = {{ops::add(), "binary_add"},
                                                          {ops::bias_add(), "binary_add"},
                                                          {ops::multiply(), "binary_mul"},
                                                          {ops::subtract(), "binary_sub"},
                                                          {ops::divide(), "binary_div"}};
  auto it = std::find_if(std::begin(binary), std::end(binary), [&](const auto& row) { return row.first == op; });
  if (it == std::end(binary)) return std::nullopt;
  if (!chain_first && (op == ops::subtract() || op == ops::divide() || op == ops::bias_add())) return std::nullopt;
  int input = parameter_index(k, side);
  if (input < 0 || dtype_of(side) != DType::kFloat32) return std::nullopt;
  // A residual of the destination's own shape: the primitive adds what the
  // destination already holds (one sum per chain, as oneDNN allows). Not
  // after a pool: oneDNN's pooling accepts a sum post-op and ignores it.
  bool sums = operation.spec.kind != PrimitiveKind::kPooling;
  if (op == ops::add() && sums && !summed && shape_of(side) == shape_of(Expr(&call))) {
    PrimitivePostOp sum;
    sum.kind = PrimitivePostOp::Kind::kSum;
    sum.input = input;
    sum.operand = operation.spec.dst;  // the residual has the destination's shape and layout
    return sum;
  }
  std::optional<Dims> operand = operand_dims(call, side, operation);
  if (!operand) return std::nullopt;
  // After a convolution, one value per channel or one in all: oneDNN's
  // GEMM-based convolution reads any other operand at the wrong elements
  // where PlanLayouts gives the destination a layout (the runtime refuses it).
  if (operation.is_convolution)
    for (size_t d = 0; d < operand->size(); ++d)
      if ((*operand)[d] != 1 && d != 1) return std::nullopt;
  PrimitivePostOp binary_op;
  binary_op.kind = PrimitivePostOp::Kind::kBinary;
  binary_op.algorithm = it->second;
  binary_op.input = input;
  binary_op.operand = {*operand, dense_strides(*operand)};
  return binary_op;
}

// Post-ops as oneDNN computes them right: adjacent linear steps become one
// (a multiply and an add are HardSigmoid's a*x + b), and a chain takes one
// set of parameters per eltwise algorithm
// (repeated_eltwise_parameters says why).
class PostOpChain {
 public:
  // Whether `post` joined the chain (merged into its last post-op or appended).
  bool add(const PrimitivePostOp& post) {
    std::vector<PrimitivePostOp> longer = posts_;
    if (is_linear(post) && !longer.empty() && is_linear(longer.back())) {
      PrimitivePostOp& last = longer.back();
      double alpha = double(post.alpha) * last.alpha, beta = double(post.alpha) * last.beta + post.beta;
      if (!std::isfinite(float(alpha)) || !std::isfinite(float(beta))) return false;
      last.alpha = float(alpha);
      last.beta = float(beta);
    } else {
      longer.push_back(post);
    }
    if (!repeated_eltwise_parameters(longer).empty()) return false;
    summed_ = summed_ || post.kind == PrimitivePostOp::Kind::kSum;
    posts_ = std::move(longer);
    return true;
  }
  const std::vector<PrimitivePostOp>& posts() const { return posts_; }
  bool summed() const { return summed_; }

 private:
  static bool is_linear(const PrimitivePostOp& p) {
    return p.kind == PrimitivePostOp::Kind::kEltwise && p.algorithm == "eltwise_linear";
  }
  std::vector<PrimitivePostOp> posts_;
  bool summed_ = false;
};

}  // namespace

DnnlEpilogue map_dnnl_epilogue(const CpuKernel& k, const DnnlAnchor& operation, bool gelu_post_op) {
  DnnlEpilogue epilogue;
  epilogue.base = k.master;
  const Readers readers(k);
  const CallNode* gelu = gelu_argument(k.root);
  if (gelu && dtype_of(Expr(k.root)) != DType::kFloat32) gelu = nullptr;
  const CallNode* at = k.master;
  auto [first, first_position] = readers.next_step(at);
  if (first && gelu != at && dtype_of(Expr(first)) == DType::kFloat32)
    if (std::optional<Dims> bias = bias_dims(k, *first, first_position, operation)) {
      epilogue.base = at = first;
      epilogue.bias_input = parameter_index(k, first->args[1 - first_position]);
      epilogue.bias_dims = *bias;
    }
  // The longest chain of steps from the anchor that post-ops compute; the
  // loop after the primitive computes the rest of the epilogue from there.
  PostOpChain chain;
  while (at != k.root && at != gelu) {
    if (auto gated = self_gated_step(readers, at)) {
      if (!chain.add(gated->second)) break;
      at = gated->first;
      continue;
    }
    auto [step, position] = readers.next_step(at);
    if (!step) break;
    std::optional<PrimitivePostOp> post = post_op_of(k, *step, position, operation, chain.summed());
    if (!post || !chain.add(*post)) break;
    at = step;
  }
  if (at == gelu && gelu_post_op && chain.add(append("eltwise_gelu_erf", 0, 0))) at = k.root;
  epilogue.post_ops = chain.posts();
  epilogue.post_ops_root = at;
  return epilogue;
}

}  // namespace switchyard
