// oneDNN primitives in the runtime: their manifest entries (round trip and
// every refusal naming its path) and what a primitive computes, against
// plain loops, in every layout choice and with each kind of post-op.
#include "runtime/dnnl_primitive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "hand_model.h"
#include "manifest_error.h"
#include "primitive_buffers.h"
#include "runtime/manifest.h"
#include "runtime/packed_matmul.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace {

using testing::random_values;
using testing::Workspace;

using nlohmann::json;
using Dims = std::vector<int64_t>;

Dims dense(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

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
}

TEST(PrimitiveManifest, EveryRefusalNamesItsPath) {
  struct Bad {
    const char* what;
    std::function<void(json&)> change;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"unknown kind", [](json& j) { j["primitives"][0]["kind"] = "lstm"; },
       "primitives[0].kind: unknown value 'lstm' (expected one of convolution, matmul, pooling)"},
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
        primitive.execute(inputs, outputs, weights, workspace.get());
        expect_close(y, expected);
      }
    }
  }
}

// A 3x3 convolution, stride 1, padding 1, with a blocked layout of oneDNN's
// choosing for activations and weights, against plain loops.
TEST(DnnlPrimitive, BlockedConvolutionMatchesLoops) {
  const int64_t c = 3, o = 20, h = 7, wd = 6;
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kConvolution;
  s.algorithm = "convolution_direct";
  s.src = {{1, c, h, wd}, dense({1, c, h, wd})};
  s.weights = {{o, c, 3, 3}, dense({o, c, 3, 3})};
  s.dst = {{1, o, h, wd}, dense({1, o, h, wd})};
  s.weights_input = 1;
  s.strides = {1, 1};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {1, 1};
  s.any_weights_layout = s.any_activation_layout = true;
  std::vector<float> x = random_values(size_t(c * h * wd), 5), w = random_values(size_t(o * c * 9), 6);
  std::vector<float> expected(size_t(o * h * wd));
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
  DnnlPrimitive primitive(s, 2);
  Workspace workspace(primitive.workspace_bytes());
  std::vector<float> out(expected.size());
  const void* inputs[] = {x.data(), w.data()};
  void* outputs[] = {out.data()};
  std::shared_ptr<const PreparedWeights> prepared = primitive.prepare_weights(w.data());
  primitive.execute(inputs, outputs, prepared.get(), workspace.get());
  expect_close(out, expected);
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

}  // namespace
}  // namespace switchyard
