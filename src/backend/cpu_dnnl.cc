// float32 anchors through oneDNN: nn.dense, matmul and nn.batch_matmul as
// matmul primitives (transposes expressed as strides, no copies),
// nn.conv2d, and the pools. The primitive is created once, on first use, in a
// function-local static (thread-safe); each run makes its own stream and
// scratchpad, so concurrent runs share nothing mutable. The element-wise
// epilogue becomes oneDNN post-ops when every step maps to one; when this
// oneDNN build cannot fuse them (or a step has no post-op) it runs as a
// generated loop over the output.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "backend/cpu_kernel.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "support/error.h"

namespace switchyard {

namespace {

using Dims = std::vector<int64_t>;

std::string dims(const Dims& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(std::to_string(v));
  return "dims{" + join(parts) + "}";
}

Dims dense_strides(const Dims& shape) {
  Dims strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

struct Descriptor {
  std::string name;  // field of Plan
  Dims shape, strides;
};

struct Argument {
  std::string role;      // "DNNL_ARG_SRC"
  std::string desc;      // descriptor name
  std::string pointer;   // "buffers.in0_x"
  bool is_const = true;
};

// What oneDNN computes for the anchor, and how the IR output maps onto its
// destination's dimensions (they differ for nn.dense and promoted matmul).
struct Operation {
  std::string primitive;         // "dnnl::matmul"
  std::string description;       // the operation descriptor's constructor arguments
  std::vector<Descriptor> descriptors;
  std::vector<Argument> arguments;
  std::function<std::optional<Dims>(const Dims&)> to_destination;  // IR output dims -> dst dims
};

Descriptor plain(const std::string& name, const Dims& shape) { return {name, shape, dense_strides(shape)}; }

Operation product(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const std::string& op = as<OpNode>(call.op)->name;
  Dims a = shape_of(call.args[0]), b = shape_of(call.args[1]);
  Operation o;
  o.primitive = "dnnl::matmul";
  o.description = "p.src, p.weights, p.dst";
  Dims out = shape_of(Expr(&call));
  if (op == "nn.dense") {
    int64_t k_size = a.back(), n = b[0], m = 1;
    for (size_t d = 0; d + 1 < a.size(); ++d) m *= a[d];
    o.descriptors = {plain("src", {m, k_size}), {"weights", {k_size, n}, {1, k_size}}, plain("dst", {m, n})};
    o.to_destination = [out, m](const Dims& side) -> std::optional<Dims> {
      bool ones = true, full = true;
      for (size_t d = 0; d + 1 < side.size(); ++d) {
        ones = ones && side[d] == 1;
        full = full && side[d] == out[d];
      }
      if (ones) return Dims{1, side.back()};
      if (full) return Dims{m, side.back()};
      return std::nullopt;
    };
  } else if (op == "matmul") {
    bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    size_t rank = std::max(a.size(), b.size());
    a.insert(a.begin(), rank - a.size(), 1);
    b.insert(b.begin(), rank - b.size(), 1);
    Dims dst = a;
    for (size_t d = 0; d + 2 < rank; ++d) dst[d] = std::max(a[d], b[d]);
    dst[rank - 1] = b[rank - 1];
    o.descriptors = {plain("src", a), plain("weights", b), plain("dst", dst)};
    o.to_destination = [rank, a_vector, b_vector](Dims side) -> std::optional<Dims> {
      if (b_vector) side.push_back(1);
      if (a_vector) side.insert(side.end() - 1, 1);
      side.insert(side.begin(), rank - std::min(rank, side.size()), 1);
      return side;
    };
  } else {  // nn.batch_matmul
    bool ta = call.attrs->get_bool("transpose_a"), tb = call.attrs->get_bool("transpose_b");
    int64_t m = ta ? a[2] : a[1], k_size = ta ? a[1] : a[2], n = tb ? b[1] : b[2];
    o.descriptors = {{"src", {a[0], m, k_size}, ta ? Dims{m * k_size, 1, m} : Dims{m * k_size, k_size, 1}},
                     {"weights", {b[0], k_size, n}, tb ? Dims{k_size * n, 1, k_size} : Dims{k_size * n, n, 1}},
                     plain("dst", out)};
    o.to_destination = [](const Dims& side) { return std::optional<Dims>(side); };
  }
  o.arguments = {{"DNNL_ARG_SRC", "src", "buffers." + k.input(0)},
                 {"DNNL_ARG_WEIGHTS", "weights", "buffers." + k.input(1)}};
  return o;
}

// Right padding that gives oneDNN the output extent the IR computed (larger
// than the attribute's padding under ceil_mode).
int64_t effective_right_padding(int64_t input, int64_t left, int64_t right, int64_t kernel, int64_t stride,
                                int64_t dilation, int64_t output) {
  return std::max(right, (output - 1) * stride + (kernel - 1) * dilation + 1 - input - left);
}

Operation window(const CpuKernel& k) {
  const CallNode& call = *k.master;
  const std::string& op = as<OpNode>(call.op)->name;
  Dims in = shape_of(call.args[0]), out = shape_of(Expr(&call));
  Operation o;
  o.to_destination = [](const Dims& side) { return std::optional<Dims>(side); };
  o.arguments = {{"DNNL_ARG_SRC", "src", "buffers." + k.input(0)}};
  if (op == "nn.global_avg_pool2d") {
    o.primitive = "dnnl::pooling_v2_forward";
    o.descriptors = {plain("src", in), plain("dst", out)};
    o.description = "dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_avg_exclude_padding, p.src, p.dst, " +
                    dims({1, 1}) + ", " + dims({in[2], in[3]}) + ", " + dims({0, 0}) + ", " + dims({0, 0}) + ", " +
                    dims({0, 0});
    return o;
  }
  auto [stride_h, stride_w] = attr_pair(call, "strides");
  auto [dilation_h, dilation_w] = attr_pair(call, "dilation");
  Padding2D pad = expand_padding(call.attrs->get_ints("padding"));
  if (op == "nn.conv2d") {
    Dims w = shape_of(call.args[1]);
    int64_t groups = call.attrs->get_int("groups");
    Dims weights = groups == 1 ? w : Dims{groups, w[0] / groups, w[1], w[2], w[3]};
    o.primitive = "dnnl::convolution_forward";
    o.descriptors = {plain("src", in), plain("weights", weights), plain("dst", out)};
    o.description =
        "dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p.src, p.weights, p.dst, " +
        dims({stride_h, stride_w}) + ", " + dims({dilation_h - 1, dilation_w - 1}) + ", " + dims({pad.top, pad.left}) +
        ", " + dims({pad.bottom, pad.right});
    o.arguments.push_back({"DNNL_ARG_WEIGHTS", "weights", "buffers." + k.input(1)});
    return o;
  }
  auto [pool_h, pool_w] = expand_pair(call.attrs->get_ints("pool_size"));
  int64_t bottom = effective_right_padding(in[2], pad.top, pad.bottom, pool_h, stride_h, dilation_h, out[2]);
  int64_t right = effective_right_padding(in[3], pad.left, pad.right, pool_w, stride_w, dilation_w, out[3]);
  std::string algorithm = op == "nn.max_pool2d"                        ? "pooling_max"
                          : call.attrs->get_bool("count_include_pad") ? "pooling_avg_include_padding"
                                                                       : "pooling_avg_exclude_padding";
  o.primitive = "dnnl::pooling_v2_forward";
  o.descriptors = {plain("src", in), plain("dst", out)};
  o.description = "dnnl::prop_kind::forward_inference, dnnl::algorithm::" + algorithm + ", p.src, p.dst, " +
                  dims({stride_h, stride_w}) + ", " + dims({pool_h, pool_w}) + ", " +
                  dims({dilation_h - 1, dilation_w - 1}) + ", " + dims({pad.top, pad.left}) + ", " +
                  dims({bottom, right});
  return o;
}

struct PostOp {
  std::string append;  // the post_ops call
  int input = -1;      // the parameter a binary post-op reads
  Dims operand;        // its dims in the destination's view
};

std::optional<std::string> eltwise(const std::string& op, const CallNode& call) {
  auto append = [](const std::string& algorithm, double alpha, double beta) {
    return "epilogue.append_eltwise(1.0f, dnnl::algorithm::" + algorithm + ", " + literal(DType::kFloat32, alpha) +
           ", " + literal(DType::kFloat32, beta) + ");";
  };
  if (op == "nn.relu") return append("eltwise_relu", 0, 0);
  if (op == "tanh") return append("eltwise_tanh", 0, 0);
  if (op == "sigmoid") return append("eltwise_logistic", 0, 0);
  if (op == "exp") return append("eltwise_exp", 0, 0);
  if (op == "log") return append("eltwise_log", 0, 0);
  if (op == "sqrt") return append("eltwise_sqrt", 0, 0);
  if (op == "abs") return append("eltwise_abs", 0, 0);
  if (op == "negative") return append("eltwise_linear", -1, 0);
  if (op == "rsqrt") return append("eltwise_pow", 1, -0.5);
  if (op == "clip") return append("eltwise_clip", call.attrs->get_float("a_min"), call.attrs->get_float("a_max"));
  return std::nullopt;
}

// The epilogue as post-ops, or nullopt when some step has none: a chain of
// calls from the anchor to the result, each reading the chain once plus
// parameters or scalar constants.
std::optional<std::vector<PostOp>> map_epilogue(const CpuKernel& k, const Operation& operation) {
  std::vector<std::pair<const CallNode*, size_t>> chain;  // call, argument index of the chain
  for (const CallNode* node = k.root; node != k.master;) {
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
  std::vector<PostOp> post_ops;
  static const std::map<std::string, std::string> binary = {
      {"add", "binary_add"}, {"nn.bias_add", "binary_add"}, {"multiply", "binary_mul"}, {"subtract", "binary_sub"},
      {"divide", "binary_div"}, {"maximum", "binary_max"}, {"minimum", "binary_min"}};
  for (auto [call, position] : chain) {
    const std::string& op = as<OpNode>(call->op)->name;
    if (dtype_of(Expr(call)) != DType::kFloat32) return std::nullopt;
    if (std::optional<std::string> e = eltwise(op, *call)) {
      post_ops.push_back({*e});
      continue;
    }
    auto it = binary.find(op);
    if (it == binary.end() || call->args.size() != 2) return std::nullopt;
    const Expr& side = call->args[1 - position];
    bool chain_first = position == 0;
    if (const ConstantNode* c = as<ConstantNode>(side)) {
      if (c->data.dtype() != DType::kFloat32) return std::nullopt;
      double s = c->data.get_as_double(0);
      auto linear = [](double alpha, double beta) {
        return "epilogue.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, " + literal(DType::kFloat32, alpha) +
               ", " + literal(DType::kFloat32, beta) + ");";
      };
      if (op == "add") post_ops.push_back({linear(1, s)});
      else if (op == "multiply") post_ops.push_back({linear(s, 0)});
      else if (op == "subtract") post_ops.push_back({chain_first ? linear(1, -s) : linear(-1, s)});
      else if (op == "divide" && chain_first && s != 0) post_ops.push_back({linear(1 / s, 0)});
      else return std::nullopt;
      continue;
    }
    if (!chain_first && (op == "subtract" || op == "divide" || op == "nn.bias_add")) return std::nullopt;
    if (dtype_of(side) != DType::kFloat32) return std::nullopt;
    const Dims& out = shape_of(Expr(call));
    Dims side_shape = shape_of(side);
    if (op == "nn.bias_add") {
      int64_t axis = call->attrs->get_int("axis");
      if (axis < 0) axis += int64_t(out.size());
      side_shape.assign(out.size(), 1);
      side_shape[size_t(axis)] = out[size_t(axis)];
    } else {
      side_shape.insert(side_shape.begin(), out.size() - side_shape.size(), 1);
    }
    std::optional<Dims> operand = operation.to_destination(side_shape);
    if (!operand) return std::nullopt;
    int input = -1;
    for (size_t i = 0; i < k.function->params.size(); ++i)
      if (k.function->params[i].get() == side.get()) input = int(i);
    if (input < 0) return std::nullopt;
    std::string name = "binary_" + std::to_string(post_ops.size());
    post_ops.push_back(
        {"epilogue.append_binary(dnnl::algorithm::" + it->second + ", p." + name + ");", input, *operand});
  }
  return post_ops;
}

void write_plan(CpuKernel& k, const Operation& o, const std::optional<std::vector<PostOp>>& post_ops) {
  CodeWriter& d = k.definitions;
  std::string op = as<OpNode>(k.master->op)->name;
  d.line("// The oneDNN plan of " + op + at_span(k.master->span()) + ": made once, on first use.");
  d.open("struct Plan");
  d.line("dnnl::engine engine{dnnl::engine::kind::cpu, 0};");
  std::vector<std::string> names;
  for (const Descriptor& desc : o.descriptors) names.push_back(desc.name);
  if (post_ops)
    for (size_t i = 0; i < post_ops->size(); ++i)
      if ((*post_ops)[i].input >= 0) names.push_back("binary_" + std::to_string(i));
  d.line("dnnl::memory::desc " + join(names) + ", scratchpad;");
  d.line(o.primitive + " primitive;");
  d.line("bool epilogue_fused = false;");
  d.close(";");
  d.line();
  d.open("const Plan& plan()");
  d.open("static const Plan instance = []");
  d.line("using dims = dnnl::memory::dims;");
  d.line("const auto f32 = dnnl::memory::data_type::f32;");
  d.line("Plan p;");
  for (const Descriptor& desc : o.descriptors)
    d.line("p." + desc.name + " = dnnl::memory::desc(" + dims(desc.shape) + ", f32, " + dims(desc.strides) + ");");
  if (post_ops)
    for (size_t i = 0; i < post_ops->size(); ++i)
      if ((*post_ops)[i].input >= 0)
        d.line("p.binary_" + std::to_string(i) + " = dnnl::memory::desc(" + dims((*post_ops)[i].operand) + ", f32, " +
               dims(dense_strides((*post_ops)[i].operand)) + ");");
  d.line("const " + o.primitive + "::desc operation(" + o.description + ");");
  d.open("auto attributes = [&](bool with_epilogue)");
  d.line("dnnl::primitive_attr attr;");
  d.line("attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per run: runs may overlap");
  if (post_ops && !post_ops->empty()) {
    d.open("if (with_epilogue)");
    d.line("dnnl::post_ops epilogue;");
    for (const PostOp& post : *post_ops) d.line(post.append);
    d.line("attr.set_post_ops(epilogue);");
    d.close();
  }
  d.line("return attr;");
  d.close(";");
  d.line(o.primitive + "::primitive_desc description;");
  if (post_ops && !post_ops->empty()) {
    d.open("try");
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(true), p.engine);");
    d.line("p.epilogue_fused = true;");
    d.next("catch (const dnnl::error&)");
    d.line("// This oneDNN cannot fuse the epilogue: it runs as a loop after the primitive.");
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(false), p.engine);");
    d.close();
  } else {
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(false), p.engine);");
  }
  d.line("p.scratchpad = description.scratchpad_desc();");
  d.line("p.primitive = " + o.primitive + "(description);");
  d.line("return p;");
  d.close("();");
  d.line("return instance;");
  d.close();
  d.line();
}

}  // namespace

bool dnnl_handles(const CallNode& anchor) {
  static const std::set<std::string> ops = {"nn.dense",    "matmul",       "nn.batch_matmul",     "nn.conv2d",
                                            "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d"};
  const std::string& op = as<OpNode>(anchor.op)->name;
  if (!ops.count(op)) return false;
  std::vector<Expr> tensors(anchor.args.begin(), anchor.args.end());
  tensors.push_back(Expr(&anchor));
  for (const Expr& t : tensors) {
    const TensorTypeNode* type = as_tensor(t->checked_type());
    if (!type || type->dtype != DType::kFloat32 || type->numel() == 0 || type->ndim() > 12) return false;
  }
  if (op == "nn.conv2d")
    return anchor.attrs->get_string("data_layout") == "NCHW" && anchor.attrs->get_string("kernel_layout") == "OIHW";
  if (op == "nn.global_avg_pool2d" || op == "nn.max_pool2d" || op == "nn.avg_pool2d")
    if (anchor.attrs->get_string("layout") != "NCHW") return false;
  if (op == "nn.avg_pool2d" && anchor.attrs->get_bool("count_include_pad")) {
    // oneDNN would count ceil_mode's extra window positions as padding; the
    // reference does not.
    const Dims& in = shape_of(anchor.args[0]);
    const Dims& out = shape_of(Expr(&anchor));
    auto [stride_h, stride_w] = attr_pair(anchor, "strides");
    auto [dilation_h, dilation_w] = attr_pair(anchor, "dilation");
    auto [pool_h, pool_w] = expand_pair(anchor.attrs->get_ints("pool_size"));
    Padding2D pad = expand_padding(anchor.attrs->get_ints("padding"));
    return effective_right_padding(in[2], pad.top, pad.bottom, pool_h, stride_h, dilation_h, out[2]) == pad.bottom &&
           effective_right_padding(in[3], pad.left, pad.right, pool_w, stride_w, dilation_w, out[3]) == pad.right;
  }
  return true;
}

void generate_dnnl_kernel(CpuKernel& k) {
  const std::string& op = as<OpNode>(k.master->op)->name;
  Operation o = op == "nn.dense" || op == "matmul" || op == "nn.batch_matmul" ? product(k) : window(k);
  k.includes.insert("<oneapi/dnnl/dnnl.hpp>");
  k.includes.insert("<unordered_map>");
  std::optional<std::vector<PostOp>> post_ops;
  if (k.has_epilogue()) post_ops = map_epilogue(k, o);
  // The anchor writes the output directly unless the epilogue changes the dtype.
  std::string destination = k.output(0);
  if (k.has_epilogue() && k.output_dtype() != DType::kFloat32) {
    int64_t count = as_tensor(k.master->checked_type())->numel();
    k.setup.line("std::unique_ptr<float[]> anchor_storage(new float[" + std::to_string(count) + "]);");
    k.buffers.push_back({"anchor", "float", false, "anchor_storage.get()", op + "'s result, before the epilogue"});
    k.includes.insert("<memory>");
    destination = "anchor";
  }
  o.arguments.push_back({"DNNL_ARG_DST", "dst", "buffers." + destination, false});
  write_plan(k, o, post_ops);

  CodeWriter& e = k.entry;
  e.line("const Plan& p = plan();");
  e.line("dnnl::stream stream(p.engine);");
  e.open("std::unordered_map<int, dnnl::memory> arguments");
  for (size_t i = 0; i < o.arguments.size(); ++i) {
    const Argument& a = o.arguments[i];
    std::string pointer = a.is_const ? "const_cast<float*>(" + a.pointer + ")" : a.pointer;
    e.line("{" + a.role + ", dnnl::memory(p." + a.desc + ", p.engine, " + pointer + ")}" +
           (i + 1 < o.arguments.size() ? "," : ""));
  }
  e.close(";");
  e.line(
      "if (p.scratchpad.get_size() > 0) arguments.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratchpad, p.engine));");
  bool fusable = post_ops && !post_ops->empty();
  if (fusable) {
    e.open("if (p.epilogue_fused)");
    for (size_t i = 0; i < post_ops->size(); ++i) {
      const PostOp& post = (*post_ops)[i];
      if (post.input < 0) continue;
      e.line("arguments.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(" + std::to_string(i) +
             ") | DNNL_ARG_SRC_1, dnnl::memory(p.binary_" + std::to_string(i) +
             ", p.engine, const_cast<float*>(buffers." + k.input(size_t(post.input)) + ")));");
    }
    e.close();
  }
  e.line("p.primitive.execute(stream, arguments);");
  e.line("stream.wait();");
  if (!k.has_epilogue()) return;
  if (fusable) e.open("if (!p.epilogue_fused)");
  Expr root(k.root);
  emit_element_loop(k, "epilogue", "The epilogue over " + op + "'s result", k.outputs[0]->shape, k.output_dtype(),
                    k.output(0), [&](ElementEmitter& emitter, const ElementIndex& at) {
                      emitter.bind_buffer(k.master, destination);
                      return emitter.emit(root, at);
                    });
  if (fusable) e.close();
}

}  // namespace switchyard
