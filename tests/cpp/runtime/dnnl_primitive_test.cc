// oneDNN primitives in the runtime: their manifest entries (round trip and
// every refusal naming its path) and what a primitive computes, against
// plain loops, in every layout choice and with each kind of post-op.
#include "targets/cpu/runtime/dnnl_primitive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "hand_model.h"
#include "manifest_error.h"
#include "primitive_buffers.h"
#include "runtime/manifest.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/packed_matmul.h"

namespace switchyard {
namespace dnnl_primitive_test {

using testing::dense;
using testing::random_values;
using testing::Workspace;

using nlohmann::json;
using Dims = std::vector<int64_t>;

// y[8, 16] = relu(x[8, 16] @ w[16, 16] + bias) + residual, reading w from weight 0 of the hand model's manifest.
PrimitiveSpec dense_spec() {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  const int64_t rows = testing::kHandModelRows, cols = testing::kHandModelCols;
  s.src = {{rows, cols}, dense({rows, cols})};
  s.weights = {{cols, cols / 2}, {1, cols}};  // w read transposed, as nn.dense does
  s.bias = {{1, cols / 2}, {cols / 2, 1}};
  s.dst = {{rows, cols / 2}, dense({rows, cols / 2})};
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.any_weights_layout = true;
  PrimitivePostOp relu;
  relu.algorithm = "eltwise_relu";
  PrimitivePostOp sum;
  sum.kind = PrimitivePostOp::Kind::kSum;
  sum.input = 3;
  sum.operand = s.dst;
  s.post_ops = {relu, sum};
  return s;
}

Manifest manifest_with_primitive() {
  Manifest m = testing::hand_model_manifest();
  m.hashes.model_so = std::string(64, 'a');
  m.hashes.weights_bin = std::string(32, 'b');
  m.weights[0].shape = {testing::kHandModelCols / 2, testing::kHandModelCols};
  layout_weights(m.weights, int(m.devices.size()));
  m.primitives = {dense_spec()};
  m.kernels[0].kind = "dnnl";
  m.kernels[0].primitive = 0;
  m.kernels[0].weights = 0;
  return m;
}

using testing::manifest_parse_error;

TEST(PrimitiveManifest, RoundTripsThroughJson) {
  Manifest m = manifest_with_primitive();
  std::string text = format_manifest(m);
  Manifest back = parse_manifest(text);
  EXPECT_EQ(format_manifest(back), text);
  ASSERT_EQ(back.primitives.size(), 1u);
  EXPECT_EQ(back.primitives[0], m.primitives[0]);
  EXPECT_EQ(back.kernels[0].primitive, 0);
  EXPECT_EQ(back.kernels[0].weights, 0);
  EXPECT_EQ(back.kernels[1].primitive, -1);
  EXPECT_FALSE(json::parse(text)["kernels"][1].contains("primitive"));
  // A matmul is oneDNN's unless it names the runtime's own packed matmul.
  EXPECT_FALSE(json::parse(text)["primitives"][0].contains("algorithm"));
  m.primitives[0].algorithm = kPackedMatmulAlgorithm;
  EXPECT_EQ(parse_manifest(format_manifest(m)).primitives[0].algorithm, kPackedMatmulAlgorithm);
  // A depthwise post-op keeps its inputs and geometry; its bias is optional.
  PrimitivePostOp depthwise{PrimitivePostOp::Kind::kDepthwise};
  depthwise.input = 3;
  depthwise.operand = {{16, 1, 1, 3, 3}, dense({16, 1, 1, 3, 3})};
  depthwise.bias_input = 4;
  depthwise.stride = 2;
  depthwise.padding = 1;
  m.primitives[0].post_ops.push_back(depthwise);
  depthwise.bias_input = -1;
  m.primitives[0].post_ops.push_back(depthwise);
  EXPECT_EQ(parse_manifest(format_manifest(m)).primitives[0], m.primitives[0]);
  // A reorder has a source and a destination only.
  PrimitiveSpec reorder;
  reorder.kind = PrimitiveKind::kReorder;
  reorder.src = {{1, 16, 2, 2}, dense({1, 16, 2, 2}), "nhwc"};
  reorder.dst = {{1, 16, 2, 2}, dense({1, 16, 2, 2})};
  m.primitives[0] = reorder;
  m.kernels[0].weights = -1;
  std::string reorder_text = format_manifest(m);
  EXPECT_EQ(parse_manifest(reorder_text).primitives[0], reorder);
  EXPECT_FALSE(json::parse(reorder_text)["primitives"][0].contains("strides"));
}

TEST(PrimitiveManifest, EveryRefusalNamesItsPath) {
  struct Bad {
    const char* what;
    std::function<void(json&)> change;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"unknown kind", [](json& j) { j["primitives"][0]["kind"] = "lstm"; },
       "primitives[0].kind: unknown value 'lstm' (expected one of convolution, matmul, pooling, reorder)"},
      {"unknown post-op algorithm", [](json& j) { j["primitives"][0]["post_ops"][0]["algorithm"] = "eltwise_magic"; },
       "primitives[0].post_ops[0].algorithm: unknown value 'eltwise_magic'"},
      {"zero dim", [](json& j) { j["primitives"][0]["src"]["dims"][0] = 0; },
       "primitives[0].src.dims[0]: expected an integer in [1, 2147483648], got 0"},
      {"strides of another rank", [](json& j) { j["primitives"][0]["src"]["strides"] = {1}; },
       "primitives[0].src.strides: expected 2 values, got 1"},
      {"huge extent", [](json& j) { j["primitives"][0]["src"]["strides"] = {int64_t(1) << 39, 1}; },
       "primitives[0].src.dims: the tensor spans more than 2^40 elements"},
      {"input index out of bounds", [](json& j) { j["primitives"][0]["src_input"] = 5000; },
       "primitives[0].src_input: expected an integer in [0, 1023], got 5000"},
      {"flag not a boolean", [](json& j) { j["primitives"][0]["any_weights_layout"] = 1; },
       "primitives[0].any_weights_layout: expected true or false, got number 1"},
      {"unknown field", [](json& j) { j["primitives"][0]["color"] = "red"; }, "primitives[0].color: unknown field"},
      {"unknown matmul algorithm", [](json& j) { j["primitives"][0]["algorithm"] = "matmul_winograd"; },
       "primitives[0].algorithm: unknown value 'matmul_winograd' (expected one of matmul_packed)"},
      {"primitive out of range", [](json& j) { j["kernels"][1]["primitive"] = 3; },
       "kernels[1].primitive: 3 out of range (1 primitives)"},
      {"weights without primitive", [](json& j) { j["kernels"][1]["weights"] = 1; },
       "kernels[1].weights: names weights but the kernel runs no primitive"},
      {"depthwise weights of another shape",
       [](json& j) {
         j["primitives"][0]["post_ops"][0] = {{"kind", "depthwise"},
                                              {"input", 3},
                                              {"operand", {{"dims", {16, 2, 1, 3, 3}}, {"strides", {18, 9, 9, 3, 1}}}},
                                              {"stride", 1},
                                              {"padding", 1}};
       },
       "primitives[0].post_ops[0].operand: depthwise weights must have dims {channels, 1, 1, k, k}"},
      {"depthwise weights for a primitive without them", [](json& j) { j["kernels"][0]["depthwise_weights"] = 0; },
       "kernels[0].depthwise_weights: primitive 0 fuses no depthwise convolution"},
      {"weights of another size", [](json& j) { j["kernels"][0]["weights"] = 1; },
       "kernels[0].weights: weight 's' (float32 (16) on cpu:1) is not the float32 weights of primitive 0 on this "
       "kernel's device"},
  };
  json document = json::parse(format_manifest(manifest_with_primitive()));
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.what);
    json changed = document;
    bad.change(changed);
    std::string error = manifest_parse_error(changed);
    EXPECT_EQ(error.rfind("manifest.json: " + bad.message, 0), 0u) << error;
  }
}

// A value nested far deeper than the stack could serialise recursively is
// described by its size, never serialised.
TEST(PrimitiveManifest, ADeeplyNestedValueIsRefusedWithoutRecursion) {
  std::string text = format_manifest(manifest_with_primitive());
  const std::string field = "\"post_ops\": [";
  size_t at = text.find(field);
  ASSERT_NE(at, std::string::npos);
  const size_t depth = 100000;
  text.insert(at + field.size(), std::string(depth, '[') + std::string(depth, ']') + ",");
  try {
    parse_manifest(text);
    FAIL() << "parsed";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "manifest.json: primitives[0].post_ops[0]: expected an object, got array of 1 elements");
  }
}

// Plain-loop reference of dense_spec(): relu(x w^T + b) + r.
std::vector<float> dense_reference(const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>& b, const std::vector<float>& r) {
  const int64_t rows = testing::kHandModelRows, k = testing::kHandModelCols, n = k / 2;
  std::vector<float> y(size_t(rows * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = b[size_t(j)];
      for (int64_t p = 0; p < k; ++p) acc += double(x[size_t(i * k + p)]) * w[size_t(j * k + p)];
      y[size_t(i * n + j)] = float(std::max(acc, 0.0)) + r[size_t(i * n + j)];
    }
  return y;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 1e-5) << "element " << i;
}

TEST(DnnlPrimitive, DenseWithBiasReluAndResidualMatchesLoops) {
  const int64_t rows = testing::kHandModelRows, k = testing::kHandModelCols, n = k / 2;
  std::vector<float> x = random_values(size_t(rows * k), 1), w = random_values(size_t(n * k), 2),
                     b = random_values(size_t(n), 3), r = random_values(size_t(rows * n), 4);
  std::vector<float> expected = dense_reference(x, w, b, r);
  for (int threads : {1, 2}) {
    for (bool any : {false, true}) {
      PrimitiveSpec spec = dense_spec();
      spec.any_weights_layout = any;
      DnnlPrimitive primitive(spec, threads);
      Workspace workspace(primitive.workspace_bytes());
      std::shared_ptr<const PreparedWeights> prepared = primitive.prepare_weights(w.data());
      for (const PreparedWeights* weights : {static_cast<const PreparedWeights*>(nullptr), prepared.get()}) {
        std::vector<float> y(size_t(rows * n), 99.0f);
        const void* inputs[] = {x.data(), w.data(), b.data(), r.data()};
        void* outputs[] = {y.data()};
        primitive.execute(inputs, outputs, weights, nullptr, workspace.get());
        expect_close(y, expected);
      }
    }
  }
}

// A 3x3 convolution, stride 1, padding 1, with a blocked layout of oneDNN's
// choosing for activations and weights, and its plain-loop result.
// A 3x3 convolution, stride 1, padding 1, reading `src` (kernel input 0)
// and weights of dims `weights` (kernel input 1, dense), oneDNN choosing
// the layouts of weights and plain activations.
PrimitiveSpec convolution_3x3(PrimitiveTensor src, const Dims& weights, const Dims& dst) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kConvolution;
  s.algorithm = "convolution_direct";
  s.src = std::move(src);
  s.weights = {weights, dense(weights)};
  s.dst = {dst, dense(dst)};
  s.weights_input = 1;
  s.strides = {1, 1};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {1, 1};
  s.any_weights_layout = s.any_activation_layout = true;
  return s;
}

struct ConvolutionCase {
  static constexpr int64_t c = 3, o = 20, h = 7, wd = 6;
  PrimitiveSpec spec;
  std::vector<float> x = random_values(size_t(c * h * wd), 5), w = random_values(size_t(o * c * 9), 6);
  std::vector<float> expected = std::vector<float>(size_t(o * h * wd));

  ConvolutionCase() {
    spec = convolution_3x3({{1, c, h, wd}, dense({1, c, h, wd})}, {o, c, 3, 3}, {1, o, h, wd});
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < wd; ++xx) {
          double acc = 0;
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                int64_t iy = y + ky - 1, ix = xx + kx - 1;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += double(x[size_t((ic * h + iy) * wd + ix)]) * w[size_t(((oc * c + ic) * 3 + ky) * 3 + kx)];
              }
          expected[size_t((oc * h + y) * wd + xx)] = float(acc);
        }
  }

  // The primitive's output with `weights` given prepared.
  std::vector<float> run(const DnnlPrimitive& primitive, const PreparedWeights* weights) const {
    Workspace workspace(primitive.workspace_bytes());
    std::vector<float> out(expected.size());
    const void* inputs[] = {x.data(), w.data()};
    void* outputs[] = {out.data()};
    primitive.execute(inputs, outputs, weights, nullptr, workspace.get());
    return out;
  }
};

TEST(DnnlPrimitive, BlockedConvolutionMatchesLoops) {
  ConvolutionCase t;
  DnnlPrimitive primitive(t.spec, 2);
  expect_close(t.run(primitive, primitive.prepare_weights(t.w.data()).get()), t.expected);
}

// The compiler stores weights prepared in the primitive's layout; a load
// reads them in place when its primitive takes that layout, reorders them
// from another oneDNN layout, and refuses anything else naming both.
TEST(DnnlPrimitive, StoredPreparedWeightsAreReadInPlaceOrReorderedFromAnotherLayout) {
  ConvolutionCase t;
  DnnlPrimitive primitive(t.spec, 2);
  const std::string layout = primitive.prepared_weights_layout();
  ASSERT_EQ(layout.rfind("onednn dims=20,3,3,3 padded=", 0), 0u) << layout;
  Workspace stored(primitive.prepared_weights_bytes());
  primitive.prepare_weights_into(t.w.data(), stored.get());
  std::shared_ptr<const PreparedWeights> adopted =
      primitive.adopt_prepared_weights(stored.get(), primitive.prepared_weights_bytes(), layout);
  expect_close(t.run(primitive, adopted.get()), t.expected);
  // Read where they lie: zeroed there, the convolution (no bias) gives zeros.
  std::fill_n(static_cast<unsigned char*>(stored.get()), primitive.prepared_weights_bytes(), 0);
  expect_close(t.run(primitive, adopted.get()), std::vector<float>(t.expected.size(), 0.0f));
  // The plain OIHW weights described as a oneDNN layout: reordered from it.
  const std::string plain = "onednn dims=20,3,3,3 padded=20,3,3,3 offsets=0,0,0,0 offset0=0 strides=27,9,3,1 blocks=";
  expect_close(t.run(primitive, primitive.adopt_prepared_weights(t.w.data(), t.w.size() * 4, plain).get()),
               t.expected);
  auto refusal = [&](const std::string& text, size_t bytes) {
    try {
      primitive.adopt_prepared_weights(t.w.data(), bytes, text);
      return std::string("(adopted)");
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(refusal(plain, 100), "weights prepared as '" + plain + "': it takes 2160 bytes, not 100");
  EXPECT_EQ(refusal(layout, 100), "weights prepared as '" + layout + "' are 100 bytes, not " +
                                      std::to_string(primitive.prepared_weights_bytes()));
  EXPECT_EQ(refusal("winograd_f4x4_3x3 [36][3][20]", 8640),
            "weights prepared as 'winograd_f4x4_3x3 [36][3][20]', but this primitive reads '" + layout + "'");
  EXPECT_EQ(refusal("onednn dims=20,3 padded=20,3,3,3 offsets=0,0 offset0=0 strides=1,1 blocks=", 2160),
            "weights prepared as 'onednn dims=20,3 padded=20,3,3,3 offsets=0,0 offset0=0 strides=1,1 blocks=': "
            "unreadable oneDNN layout 'onednn dims=20,3 padded=20,3,3,3 offsets=0,0 offset0=0 strides=1,1 blocks=': "
            "padded has another rank than dims");
  EXPECT_EQ(refusal("onednn dims=x", 2160),
            "weights prepared as 'onednn dims=x': unreadable oneDNN layout 'onednn dims=x': 'x' is not a list of "
            "integers");
  const std::string other_dims =
      "onednn dims=3,20,3,3 padded=3,20,3,3 offsets=0,0,0,0 offset0=0 strides=180,9,3,1 blocks=";
  EXPECT_EQ(refusal(other_dims, 2160),
            "weights prepared as '" + other_dims + "': its dimensions are not the weights'");
}

// A depthwise convolution reading channel blocks and writing a dense
// destination computes in the blocks (oneDNN, left to choose, had paired
// them with a channels-last destination that only its reference kernel runs).
TEST(DnnlPrimitive, AConvolutionReadingALayoutWritesItBeforeTheDenseDestination) {
  const int64_t c = 32, h = 9, w = 7;
  const std::string blocks = "nChw" + std::to_string(dnnl_channel_block()) + "c";
  PrimitiveSpec s = convolution_3x3({{1, c, h, w}, dense({1, c, h, w}), blocks}, {c, 1, 1, 3, 3}, {1, c, h, w});
  DnnlPrimitive primitive(s, 1);
  EXPECT_EQ(primitive.implementation().rfind("ref", 0), std::string::npos) << primitive.implementation();
  // Against the same convolution reading a dense source.
  PrimitiveSpec dense_source = s;
  dense_source.src.format.clear();
  PrimitiveSpec to_blocks;
  to_blocks.kind = PrimitiveKind::kReorder;
  to_blocks.src = dense_source.src;
  to_blocks.dst = s.src;
  std::vector<float> x = random_values(size_t(c * h * w), 21), weights = random_values(size_t(c * 9), 22);
  std::vector<float> blocked(dnnl_tensor_bytes(s.src) / sizeof(float)), out(x.size()), expected(x.size());
  auto run = [](const PrimitiveSpec& spec, std::vector<const void*> inputs, float* output) {
    DnnlPrimitive made(spec, 1);
    Workspace workspace(made.workspace_bytes());
    void* outputs[] = {output};
    made.execute(inputs.data(), outputs, nullptr, nullptr, workspace.get());
  };
  run(to_blocks, {x.data()}, blocked.data());
  run(s, {blocked.data(), weights.data()}, out.data());
  run(dense_source, {x.data(), weights.data()}, expected.data());
  expect_close(out, expected);
}

// A layout conversion: dense -> channels last -> 16-channel blocks -> dense.
TEST(DnnlPrimitive, AReorderConvertsBetweenLayoutsAndBack) {
  const Dims dims{2, 20, 3, 5};  // 20 channels: the blocks pad 12 more
  auto reorder = [&](PrimitiveTensor src, PrimitiveTensor dst) {
    PrimitiveSpec s;
    s.kind = PrimitiveKind::kReorder;
    s.src = std::move(src);
    s.dst = std::move(dst);
    return s;
  };
  const PrimitiveTensor plain{dims, dense(dims)}, channels_last{dims, {}, "nhwc"}, blocked{dims, {}, "nChw16c"};
  std::vector<float> x = random_values(2 * 20 * 3 * 5, 11);
  std::vector<float> nhwc(x.size()), blocks(dnnl_tensor_bytes(blocked) / sizeof(float)), back(x.size());
  auto run = [](const PrimitiveSpec& spec, const float* in, float* out) {
    DnnlPrimitive primitive(spec, 2);
    Workspace workspace(primitive.workspace_bytes());
    const void* inputs[] = {in};
    void* outputs[] = {out};
    primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get());
  };
  run(reorder(plain, channels_last), x.data(), nhwc.data());
  run(reorder(channels_last, blocked), nhwc.data(), blocks.data());
  run(reorder(blocked, plain), blocks.data(), back.data());
  EXPECT_EQ(back, x);
  // Channels last: element (n, c, h, w) at ((n * H + h) * W + w) * C + c.
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 20; ++c)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 5; ++w)
          ASSERT_EQ(nhwc[size_t(((n * 3 + h) * 5 + w) * 20 + c)], x[size_t(((n * 20 + c) * 3 + h) * 5 + w)]);
  // Anything but a source and a destination of the same dims is refused.
  PrimitiveSpec with_weights = reorder(plain, channels_last);
  with_weights.weights = plain;
  EXPECT_THROW(DnnlPrimitive(with_weights, 1), RuntimeError);
  EXPECT_THROW(DnnlPrimitive(reorder(plain, {{2, 20, 5, 3}, {}, "nhwc"}), 1), RuntimeError);
}

TEST(DnnlPrimitive, APrimitiveOneDnnRefusesIsAnErrorNamingIt) {
  PrimitiveSpec s = dense_spec();
  s.bias = {{3, 5}, {5, 1}};  // no broadcast onto an [8, 8] destination
  EXPECT_FALSE(dnnl_makes(s));
  try {
    DnnlPrimitive primitive(s, 1);
    FAIL() << "made";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("oneDNN cannot make the matmul primitive {\"kind\":\"matmul\"", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(dnnl_makes(dense_spec()));
}

// oneDNN's jit pools read and write one layout: a pool reading a dense
// source and writing channels last ran its reference loops, 50-150x slower
// in SqueezeNet, MobileNetV3 and Inception-v3. The primitive now reads the
// destination's layout (its source reordered to it) or writes a dense result
// reordered to the destination, whichever oneDNN has jit loops for.
PrimitiveSpec pooling(const char* algorithm, PrimitiveTensor src, PrimitiveTensor dst, int64_t window, int64_t stride) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kPooling;
  s.algorithm = algorithm;
  s.src = std::move(src);
  s.dst = std::move(dst);
  s.strides = {stride, stride};
  s.kernel = {window, window};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {0, 0};
  return s;
}

std::vector<float> run_alone(const PrimitiveSpec& spec, const std::vector<float>& x, size_t output_floats) {
  DnnlPrimitive primitive(spec, 1);
  EXPECT_FALSE(dnnl_is_reference_implementation(primitive.implementation())) << primitive.implementation();
  std::vector<float> out(output_floats);
  Workspace workspace(primitive.workspace_bytes());
  const void* inputs[] = {x.data()};
  void* outputs[] = {out.data()};
  primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get());
  return out;
}

TEST(DnnlPrimitive, APoolFromADenseSourceToChannelsLastRunsJitLoops) {
  const int64_t c = 24, h = 15, w = 15, oh = 7, ow = 7;
  std::vector<float> x = random_values(size_t(c * h * w), 31);
  PrimitiveSpec s = pooling("pooling_max", {{1, c, h, w}, dense({1, c, h, w})}, {{1, c, oh, ow}, {}, "nhwc"}, 3, 2);
  std::vector<float> out = run_alone(s, x, size_t(c * oh * ow));
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float best = -INFINITY;
        for (int64_t di = 0; di < 3; ++di)
          for (int64_t dj = 0; dj < 3; ++dj) best = std::max(best, x[size_t((k * h + 2 * i + di) * w + 2 * j + dj)]);
        ASSERT_EQ(out[size_t((i * ow + j) * c + k)], best) << "channel " << k << " at " << i << "," << j;
      }
}

// A squeeze-and-excitation block's global average pool (MobileNetV3's),
// whose jit loops oneDNN has neither from dense to channels last nor in
// channels last alone: it pools densely, then reorders.
TEST(DnnlPrimitive, AGlobalAveragePoolIntoChannelsLastRunsJitLoops) {
  const int64_t c = 576, h = 7, w = 7;
  std::vector<float> x = random_values(size_t(c * h * w), 32);
  PrimitiveSpec s = pooling("pooling_avg_exclude_padding", {{1, c, h, w}, dense({1, c, h, w})},
                            {{1, c, 1, 1}, {}, "nhwc"}, 7, 1);
  std::vector<float> out = run_alone(s, x, size_t(c));
  for (int64_t k = 0; k < c; ++k) {
    double sum = 0;
    for (int64_t i = 0; i < h * w; ++i) sum += x[size_t(k * h * w + i)];
    ASSERT_NEAR(out[size_t(k)], sum / double(h * w), 1e-5) << "channel " << k;
  }
}

// A depthwise convolution from a dense source into channel blocks (the first
// of MobileNetV3-Small's, after its stem): left to choose the source's
// layout, oneDNN paired channels last with the blocks, which only its
// reference loops run. It reads the blocks, its source reordered to them.
TEST(DnnlPrimitive, ADepthwiseConvolutionFromADenseSourceIntoBlocksRunsJitLoops) {
  const int64_t c = 16, h = 13, w = 11;
  const std::string blocks = "nChw" + std::to_string(dnnl_channel_block()) + "c";
  PrimitiveSpec s = convolution_3x3({{1, c, h, w}, dense({1, c, h, w})}, {c, 1, 1, 3, 3}, {1, c, h, w});
  s.dst.format = blocks;
  std::vector<float> x = random_values(size_t(c * h * w), 33), weights = random_values(size_t(c * 9), 34);
  DnnlPrimitive primitive(s, 1);
  EXPECT_FALSE(dnnl_is_reference_implementation(primitive.implementation())) << primitive.implementation();
  std::vector<float> blocked(dnnl_tensor_bytes(s.dst) / sizeof(float)), out(x.size()), expected(x.size());
  Workspace workspace(primitive.workspace_bytes());
  const void* inputs[] = {x.data(), weights.data()};
  void* outputs[] = {blocked.data()};
  primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get());
  PrimitiveSpec back;
  back.kind = PrimitiveKind::kReorder;
  back.src = s.dst;
  back.dst = {s.dst.dims, dense(s.dst.dims)};
  run_alone(back, blocked, out.size()).swap(out);
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double sum = 0;
        for (int64_t di = -1; di <= 1; ++di)
          for (int64_t dj = -1; dj <= 1; ++dj)
            if (i + di >= 0 && i + di < h && j + dj >= 0 && j + dj < w)
              sum += double(x[size_t((k * h + i + di) * w + j + dj)]) * weights[size_t(k * 9 + (di + 1) * 3 + dj + 1)];
        expected[size_t((k * h + i) * w + j)] = float(sum);
      }
  expect_close(out, expected);
}

// DeepLabV3's ASPP: a 3x3 convolution dilated past its image, reading channel
// blocks. oneDNN has only its reference loops for it in blocks (2 s against
// 2 ms); the primitive computes in channels last between reorders instead,
// with the same result as reading the dense source.
TEST(DnnlPrimitive, AConvolutionDilatedPastItsImageInBlocksRunsJitLoops) {
  const int64_t c = 32, o = 16, h = 9, w = 9, gap = 24;
  const std::string blocks = "nChw" + std::to_string(dnnl_channel_block()) + "c";
  PrimitiveSpec s = convolution_3x3({{1, c, h, w}, {}, blocks}, {o, c, 3, 3}, {1, o, h, w});
  s.dilation = {gap - 1, gap - 1};
  s.padding_l = s.padding_r = {gap, gap};
  DnnlPrimitive primitive(s, 1);
  EXPECT_FALSE(dnnl_is_reference_implementation(primitive.implementation())) << primitive.implementation();
  PrimitiveSpec dense_source = s;
  dense_source.src = {{1, c, h, w}, dense({1, c, h, w})};
  PrimitiveSpec to_blocks;
  to_blocks.kind = PrimitiveKind::kReorder;
  to_blocks.src = dense_source.src;
  to_blocks.dst = s.src;
  std::vector<float> x = random_values(size_t(c * h * w), 35), weights = random_values(size_t(o * c * 9), 36);
  std::vector<float> blocked = run_alone(to_blocks, x, dnnl_tensor_bytes(s.src) / sizeof(float));
  auto run = [&](const PrimitiveSpec& spec, const std::vector<float>& in) {
    DnnlPrimitive made(spec, 1);
    std::vector<float> out(size_t(o * h * w));
    Workspace workspace(made.workspace_bytes());
    const void* inputs[] = {in.data(), weights.data()};
    void* outputs[] = {out.data()};
    made.execute(inputs, outputs, nullptr, nullptr, workspace.get());
    return out;
  };
  expect_close(run(s, blocked), run(dense_source, x));
}

}  // namespace dnnl_primitive_test
}  // namespace switchyard
