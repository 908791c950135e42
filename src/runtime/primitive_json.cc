#include "runtime/primitive_json.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace switchyard {

using namespace json_fields;
using nlohmann::ordered_json;

const char* primitive_kind_name(PrimitiveKind kind) {
  switch (kind) {
    case PrimitiveKind::kConvolution:
      return "convolution";
    case PrimitiveKind::kMatmul:
      return "matmul";
    case PrimitiveKind::kPooling:
      return "pooling";
    case PrimitiveKind::kReorder:
      return "reorder";
  }
  return "?";
}

const char* post_op_kind_name(PrimitivePostOp::Kind kind) {
  switch (kind) {
    case PrimitivePostOp::Kind::kEltwise:
      return "eltwise";
    case PrimitivePostOp::Kind::kSum:
      return "sum";
    case PrimitivePostOp::Kind::kBinary:
      return "binary";
    case PrimitivePostOp::Kind::kDepthwise:
      return "depthwise";
  }
  return "?";
}

namespace {

// Bounds that no real model reaches and that keep every product of dims and
// index arithmetic far from overflow.
constexpr int64_t kMaxRank = 12;
constexpr int64_t kMaxKernelArguments = 1024;
constexpr size_t kMaxPostOps = 32;

template <size_t N>
std::string one_of(ObjectReader& r, const char* key, const std::array<const char*, N>& names) {
  std::string value = r.string(key);
  if (std::find_if(names.begin(), names.end(), [&](const char* n) { return value == n; }) != names.end())
    return value;
  std::string known;
  for (const char* n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  fail(r.source(), r.path(key), "unknown value '" + value.substr(0, 40) + "' (expected one of " + known + ")");
}

std::vector<int64_t> integers(ObjectReader& r, const char* key, int64_t min, int64_t max, size_t count) {
  const json& list = r.array(key);
  if (list.size() > size_t(kMaxRank))
    fail(r.source(), r.path(key), "more than " + std::to_string(kMaxRank) + " values");
  if (count != size_t(-1) && list.size() != count)
    fail(r.source(), r.path(key), "expected " + std::to_string(count) + " values, got " + std::to_string(list.size()));
  std::vector<int64_t> values;
  for (size_t i = 0; i < list.size(); ++i)
    values.push_back(r.read_integer(list[i], element_path(r.path(key), i), min, max));
  return values;
}

// Dims are positive and bounded so that numel and the largest offset fit in int64.
PrimitiveTensor read_tensor(ObjectReader& parent, const char* key, bool required) {
  const json* value = parent.optional(key);
  if (!value) {
    if (required) fail(parent.source(), parent.path(key), "missing field");
    return {};
  }
  ObjectReader r(*value, parent.path(key), parent.source());
  PrimitiveTensor t;
  t.dims = integers(r, "dims", 1, int64_t(1) << 31, size_t(-1));
  t.strides = integers(r, "strides", 0, int64_t(1) << 40, t.dims.size());
  if (t.dims.empty()) fail(r.source(), r.path("dims"), "must not be empty");
  if (r.optional("format")) {
    t.format = one_of(r, "format", std::array{kActivationFormats[0], kActivationFormats[1], kActivationFormats[2]});
    if (t.dims.size() != 4) fail(r.source(), r.path("format"), "an activation format needs 4 dims");
  }
  __int128 extent = 1;
  for (size_t d = 0; d < t.dims.size(); ++d) extent += __int128(t.dims[d] - 1) * t.strides[d];
  if (extent > (__int128(1) << 40)) fail(r.source(), r.path("dims"), "the tensor spans more than 2^40 elements");
  r.finish();
  return t;
}

ordered_json tensor_json(const PrimitiveTensor& t) {
  ordered_json j{{"dims", t.dims}, {"strides", t.strides}};
  if (!t.format.empty()) j["format"] = t.format;
  return j;
}

int read_input(ObjectReader& r, const char* key, bool required) {
  const json* value = r.optional(key);
  if (!value) {
    if (required) fail(r.source(), r.path(key), "missing field");
    return -1;
  }
  return int(r.read_integer(*value, r.path(key), 0, kMaxKernelArguments - 1));
}

PrimitivePostOp read_post_op(ObjectReader& r) {
  PrimitivePostOp post;
  std::string kind = one_of(r, "kind", std::array{"eltwise", "sum", "binary", "depthwise"});
  if (kind == "eltwise") {
    post.kind = PrimitivePostOp::Kind::kEltwise;
    post.algorithm = one_of(r, "algorithm",
                            std::array{"eltwise_relu", "eltwise_tanh", "eltwise_logistic", "eltwise_exp", "eltwise_log",
                                       "eltwise_sqrt", "eltwise_abs", "eltwise_linear", "eltwise_pow", "eltwise_clip",
                                       "eltwise_hardswish", "eltwise_swish", "eltwise_gelu_erf"});
    for (const char* key : {"alpha", "beta"}) {
      const json& v = r.required(key);
      if (!v.is_number()) fail(r.source(), r.path(key), "expected a number, got " + describe(v));
      (key[0] == 'a' ? post.alpha : post.beta) = v.get<float>();
    }
  } else if (kind == "sum") {
    post.kind = PrimitivePostOp::Kind::kSum;
    post.input = read_input(r, "input", true);
    post.operand = read_tensor(r, "operand", true);
  } else if (kind == "depthwise") {
    post.kind = PrimitivePostOp::Kind::kDepthwise;
    post.input = read_input(r, "input", true);
    post.operand = read_tensor(r, "operand", true);
    const std::vector<int64_t>& w = post.operand.dims;
    if (w.size() != 5 || w[1] != 1 || w[2] != 1 || w[3] != w[4])
      fail(r.source(), r.path("operand"), "depthwise weights must have dims {channels, 1, 1, k, k}");
    post.bias_input = read_input(r, "bias_input", false);
    post.stride = r.integer("stride", 1, 1 << 20);
    post.padding = r.integer("padding", 0, 1 << 20);
  } else {
    post.kind = PrimitivePostOp::Kind::kBinary;
    post.algorithm = one_of(r, "algorithm",
                            std::array{"binary_add", "binary_mul", "binary_sub", "binary_div", "binary_max",
                                       "binary_min"});
    post.input = read_input(r, "input", true);
    post.operand = read_tensor(r, "operand", true);
  }
  return post;
}

// An int8 primitive's types, output scales (positive and finite: one, or
// one per output channel) and zero points (within the type's range).
PrimitiveQuantization read_quantization(ObjectReader& parent, const PrimitiveSpec& s) {
  ObjectReader r(parent.required("quantization"), parent.path("quantization"), parent.source());
  PrimitiveQuantization q;
  if (s.kind == PrimitiveKind::kPooling) {
    // An 8-bit max pool: the element type alone, the same in and out.
    if (s.algorithm != "pooling_max" || !s.post_ops.empty())
      fail(r.source(), parent.path("quantization"), "only a max pool without post-ops is 8-bit");
    q.src_type = one_of(r, "src_type", std::array{"u8", "s8"});
    q.dst_type = one_of(r, "dst_type", std::array{"u8", "s8"});
    if (q.dst_type != q.src_type)
      fail(r.source(), r.path("dst_type"), "an 8-bit max pool writes its source's type, " + q.src_type);
    r.finish();
    return q;
  }
  if (s.kind != PrimitiveKind::kConvolution && s.kind != PrimitiveKind::kMatmul)
    fail(r.source(), parent.path("quantization"), "only a convolution, a matmul or a max pool is quantized");
  q.src_type = one_of(r, "src_type", std::array{"u8", "s8"});
  q.weights_type = one_of(r, "weights_type", std::array{"s8"});
  q.dst_type = one_of(r, "dst_type", std::array{"u8", "s8"});
  const json& scales = r.array("output_scales");
  int64_t channels = s.dst.dims.size() < 2 ? 1 : s.kind == PrimitiveKind::kConvolution ? s.dst.dims[1] : s.dst.dims.back();
  if (scales.size() != 1 && int64_t(scales.size()) != channels)
    fail(r.source(), r.path("output_scales"),
         "expected 1 or " + std::to_string(channels) + " (one per output channel) values, got " +
             std::to_string(scales.size()));
  for (size_t i = 0; i < scales.size(); ++i) {
    if (!scales[i].is_number() || !(scales[i].get<double>() > 0) || !std::isfinite(scales[i].get<float>()))
      fail(r.source(), element_path(r.path("output_scales"), i), "expected a positive finite number, got " +
                                                                     describe(scales[i]));
    q.output_scales.push_back(scales[i].get<float>());
  }
  auto zero_point = [&](const char* key, const std::string& type) {
    return int32_t(type == "u8" ? r.integer(key, 0, 255) : r.integer(key, -128, 127));
  };
  q.src_zero_point = zero_point("src_zero_point", q.src_type);
  q.dst_zero_point = zero_point("dst_zero_point", q.dst_type);
  r.finish();
  return q;
}

ordered_json quantization_json(const PrimitiveQuantization& q, PrimitiveKind kind) {
  if (kind == PrimitiveKind::kPooling) return ordered_json{{"src_type", q.src_type}, {"dst_type", q.dst_type}};
  return ordered_json{{"src_type", q.src_type},           {"weights_type", q.weights_type},
                      {"dst_type", q.dst_type},           {"output_scales", q.output_scales},
                      {"src_zero_point", q.src_zero_point}, {"dst_zero_point", q.dst_zero_point}};
}

}  // namespace

PrimitiveSpec read_primitive_spec(ObjectReader& r) {
  PrimitiveSpec s;
  std::string kind = one_of(r, "kind", std::array{"convolution", "matmul", "pooling", "reorder"});
  s.kind = kind == "convolution" ? PrimitiveKind::kConvolution
           : kind == "matmul"    ? PrimitiveKind::kMatmul
           : kind == "pooling"   ? PrimitiveKind::kPooling
                                 : PrimitiveKind::kReorder;
  bool window = s.kind == PrimitiveKind::kConvolution || s.kind == PrimitiveKind::kPooling;
  if (s.kind == PrimitiveKind::kConvolution)
    s.algorithm = one_of(r, "algorithm", std::array{"convolution_direct", kWinogradAlgorithm});
  else if (s.kind == PrimitiveKind::kPooling)
    s.algorithm = one_of(r, "algorithm",
                         std::array{"pooling_max", "pooling_avg_include_padding", "pooling_avg_exclude_padding"});
  else if (r.optional("algorithm"))  // a matmul is oneDNN's unless it names the runtime's own
    s.algorithm = one_of(r, "algorithm", std::array{kPackedMatmulAlgorithm});
  s.src = read_tensor(r, "src", true);
  s.weights = read_tensor(r, "weights", s.kind == PrimitiveKind::kConvolution || s.kind == PrimitiveKind::kMatmul);
  s.bias = read_tensor(r, "bias", false);
  s.dst = read_tensor(r, "dst", true);
  s.src_input = read_input(r, "src_input", true);
  s.weights_input = read_input(r, "weights_input", !s.weights.empty());
  s.bias_input = read_input(r, "bias_input", !s.bias.empty());
  if (window) {
    size_t spatial = s.src.dims.size() < 3 ? 0 : s.src.dims.size() - 2;
    if (spatial == 0) fail(r.source(), r.path("src"), "a window needs spatial dimensions");
    s.strides = integers(r, "strides", 1, 1 << 20, spatial);
    if (s.kind == PrimitiveKind::kPooling) s.kernel = integers(r, "kernel", 1, 1 << 20, spatial);
    s.dilation = integers(r, "dilation", 0, 1 << 20, spatial);
    s.padding_l = integers(r, "padding_l", 0, 1 << 20, spatial);
    s.padding_r = integers(r, "padding_r", -(1 << 20), 1 << 20, spatial);
  }
  s.any_weights_layout = r.boolean("any_weights_layout");
  s.any_activation_layout = r.boolean("any_activation_layout");
  if (r.array("post_ops").size() > kMaxPostOps)
    fail(r.source(), r.path("post_ops"), "more than " + std::to_string(kMaxPostOps) + " post-ops");
  s.post_ops = read_list<PrimitivePostOp>(r, "post_ops", read_post_op);
  if (r.optional("quantization")) s.quantization = read_quantization(r, s);
  return s;
}

ordered_json primitive_spec_json(const PrimitiveSpec& s) {
  ordered_json j{{"kind", primitive_kind_name(s.kind)}};
  if (!s.algorithm.empty()) j["algorithm"] = s.algorithm;
  j["src"] = tensor_json(s.src);
  if (!s.weights.empty()) j["weights"] = tensor_json(s.weights);
  if (!s.bias.empty()) j["bias"] = tensor_json(s.bias);
  j["dst"] = tensor_json(s.dst);
  j["src_input"] = s.src_input;
  if (s.weights_input >= 0) j["weights_input"] = s.weights_input;
  if (s.bias_input >= 0) j["bias_input"] = s.bias_input;
  if (s.kind == PrimitiveKind::kConvolution || s.kind == PrimitiveKind::kPooling) {
    j["strides"] = s.strides;
    if (s.kind == PrimitiveKind::kPooling) j["kernel"] = s.kernel;
    j["dilation"] = s.dilation;
    j["padding_l"] = s.padding_l;
    j["padding_r"] = s.padding_r;
  }
  j["any_weights_layout"] = s.any_weights_layout;
  j["any_activation_layout"] = s.any_activation_layout;
  j["post_ops"] = ordered_json::array();
  for (const PrimitivePostOp& p : s.post_ops) {
    ordered_json post{{"kind", post_op_kind_name(p.kind)}};
    if (!p.algorithm.empty()) post["algorithm"] = p.algorithm;
    if (p.kind == PrimitivePostOp::Kind::kEltwise) {
      post["alpha"] = p.alpha;
      post["beta"] = p.beta;
    } else {
      post["input"] = p.input;
    }
    if (p.kind != PrimitivePostOp::Kind::kEltwise) post["operand"] = tensor_json(p.operand);
    if (p.kind == PrimitivePostOp::Kind::kDepthwise) {
      if (p.bias_input >= 0) post["bias_input"] = p.bias_input;
      post["stride"] = p.stride;
      post["padding"] = p.padding;
    }
    j["post_ops"].push_back(post);
  }
  if (!s.quantization.empty()) j["quantization"] = quantization_json(s.quantization, s.kind);
  return j;
}

std::string primitive_spec_text(const PrimitiveSpec& spec) { return primitive_spec_json(spec).dump(); }

}  // namespace switchyard
