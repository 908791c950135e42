// int8 oneDNN primitives in the runtime (PrimitiveQuantization): what a
// quantized convolution and matmul compute against an exact integer
// reference of ONNX's formula, their manifest entries, and what the
// runtime refuses to run quantized.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <memory>
#include <random>
#include <set>

#include "hand_model.h"
#include "manifest_error.h"
#include "primitive_buffers.h"
#include "runtime/manifest.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {
namespace dnnl_int8_primitive_test {

using testing::dense;
using testing::Workspace;
using Dims = std::vector<int64_t>;

// A quantized convolution's operands: NCHW src, OIHW weights, integer-valued
// float bias (a QDQ model's int32 bias), one output scale per channel or one.
struct Int8Case {
  Dims src_dims, weights_dims;
  int64_t stride = 1, padding = 1;
  std::string src_type = "u8", dst_type = "u8";
  bool per_channel = true, relu = false;
  int32_t src_zero_point = 117, dst_zero_point = 9;
};

struct Int8Operands {
  std::vector<uint8_t> src;  // the bytes of u8 or s8 values
  std::vector<int8_t> weights;
  std::vector<float> bias, scales;
};

Int8Operands random_operands(const Int8Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127), bias(-20000, 20000);
  std::uniform_real_distribution<float> scale(0.5e-4f, 2e-4f);
  Int8Operands o;
  int64_t src_size = 1, weights_size = 1;
  for (int64_t d : c.src_dims) src_size *= d;
  for (int64_t d : c.weights_dims) weights_size *= d;
  for (int64_t i = 0; i < src_size; ++i) o.src.push_back(uint8_t(byte(rng)));
  for (int64_t i = 0; i < weights_size; ++i) o.weights.push_back(int8_t(weight(rng)));
  for (int64_t k = 0; k < c.weights_dims[0]; ++k) o.bias.push_back(float(bias(rng)));
  for (int64_t k = 0; k < (c.per_channel ? c.weights_dims[0] : 1); ++k) o.scales.push_back(scale(rng));
  return o;
}

int64_t out_size(const Int8Case& c, int64_t in, int64_t window) { return (in + 2 * c.padding - window) / c.stride + 1; }

PrimitiveSpec convolution(const Int8Case& c, const Int8Operands& o) {
  Dims dst{c.src_dims[0], c.weights_dims[0], out_size(c, c.src_dims[2], c.weights_dims[2]),
           out_size(c, c.src_dims[3], c.weights_dims[3])};
  PrimitiveSpec s = testing::convolution_spec("convolution_direct", {c.src_dims, dense(c.src_dims)},
                                              {c.weights_dims, dense(c.weights_dims)}, {dst, dense(dst)});
  s.strides = {c.stride, c.stride};
  s.padding_l = s.padding_r = {c.padding, c.padding};
  if (c.relu) s.post_ops.push_back({.algorithm = "eltwise_relu"});
  s.quantization = {c.src_type, "s8", c.dst_type, o.scales, c.src_zero_point, c.dst_zero_point};
  return s;
}

int64_t value_of(uint8_t byte, const std::string& type) { return type == "u8" ? int64_t(byte) : int64_t(int8_t(byte)); }

// ONNX's QLinearConv exactly: the accumulator of (src - zero point) padded
// with zeros, plus bias, times the scale in double, rounded half to even,
// plus the zero point, saturated; as bytes of dst's type.
std::vector<uint8_t> reference(const Int8Case& c, const Int8Operands& o, const Dims& dst) {
  const Dims &x = c.src_dims, &w = c.weights_dims;
  std::vector<uint8_t> out;
  double low = c.dst_type == "u8" ? 0 : -128, high = c.dst_type == "u8" ? 255 : 127;
  for (int64_t n = 0; n < dst[0]; ++n)
    for (int64_t k = 0; k < dst[1]; ++k)
      for (int64_t oy = 0; oy < dst[2]; ++oy)
        for (int64_t ox = 0; ox < dst[3]; ++ox) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < w[1]; ++ci)
            for (int64_t ky = 0; ky < w[2]; ++ky)
              for (int64_t kx = 0; kx < w[3]; ++kx) {
                int64_t y = oy * c.stride + ky - c.padding, xx = ox * c.stride + kx - c.padding;
                if (y < 0 || xx < 0 || y >= x[2] || xx >= x[3]) continue;
                int64_t v = value_of(o.src[size_t(((n * x[1] + ci) * x[2] + y) * x[3] + xx)], c.src_type);
                acc += (v - c.src_zero_point) * o.weights[size_t(((k * w[1] + ci) * w[2] + ky) * w[3] + kx)];
              }
          double real = (double(acc) + o.bias[size_t(k)]) * o.scales[o.scales.size() > 1 ? size_t(k) : 0];
          if (c.relu) real = std::max(real, 0.0);
          double q = std::clamp(std::nearbyint(real) + c.dst_zero_point, low, high);
          out.push_back(uint8_t(int8_t(int64_t(q))));
        }
  return out;
}

// `prepared`: the weights reordered once, as an artifact's load does with
// constant weights, rather than at each call (which the split products of a
// CPU without VNNI always need).
std::vector<uint8_t> run(const PrimitiveSpec& spec, const Int8Operands& o, bool prepared = false) {
  DnnlPrimitive primitive(spec, 1);
  prepared |= primitive.needs_prepared_weights();
  std::shared_ptr<const PreparedWeights> weights = prepared ? primitive.prepare_weights(o.weights.data()) : nullptr;
  int64_t dst_size = 1;
  for (int64_t d : spec.dst.dims) dst_size *= d;
  std::vector<uint8_t> out(static_cast<size_t>(dst_size));
  Workspace workspace(primitive.workspace_bytes());
  const void* inputs[] = {o.src.data(), o.weights.data(), o.bias.data()};
  void* outputs[] = {out.data()};
  primitive.execute(inputs, outputs, weights.get(), nullptr, workspace.get());
  return out;
}

TEST(DnnlInt8Primitive, ConvolutionIsExactlyOnnxsFormula) {
  const std::vector<Int8Case> cases = {
      {.src_dims = {2, 32, 9, 9}, .weights_dims = {48, 32, 3, 3}, .relu = true},
      {.src_dims = {1, 16, 11, 10}, .weights_dims = {24, 16, 3, 3}, .stride = 2, .src_type = "s8",
       .dst_type = "s8", .per_channel = false, .src_zero_point = -3, .dst_zero_point = 4},
      {.src_dims = {1, 64, 7, 7}, .weights_dims = {32, 64, 1, 1}, .padding = 0, .dst_type = "s8",
       .dst_zero_point = -20},
  };
  for (const Int8Case& c : cases) {
    for (bool any_layout : {false, true}) {
      SCOPED_TRACE(std::string(c.src_type) + " -> " + c.dst_type + (any_layout ? " in oneDNN's layouts" : ""));
      Int8Operands o = random_operands(c, 7);
      PrimitiveSpec spec = convolution(c, o);
      spec.any_activation_layout = spec.any_weights_layout = any_layout;
      std::vector<uint8_t> want = reference(c, o, spec.dst.dims);
      EXPECT_EQ(run(spec, o), want);
      EXPECT_EQ(run(spec, o, true), want);
      // Saturated and interior values both occur.
      EXPECT_TRUE(std::any_of(want.begin(), want.end(), [&](uint8_t v) { return v != want[0]; }));
    }
  }
}

// What oneDNN's jit kernels get wrong without VNNI: neighbouring products
// whose sum leaves int16 (255 * 127 * 2), of u8 and of s8 sources, against
// weights of both extremes, in every layout; and 7-bit weights at theirs
// (255 * 64 * 2 just fits).
TEST(DnnlInt8Primitive, ProductsBeyondInt16AreExact) {
  for (std::string src_type : {"u8", "s8"}) {
    Int8Case c{.src_dims = {1, 32, 7, 7}, .weights_dims = {24, 32, 3, 3}, .src_type = src_type,
               .src_zero_point = src_type == "u8" ? 0 : -128, .dst_zero_point = 100};
    Int8Operands o = random_operands(c, 13);
    std::mt19937 rng(5);
    const uint8_t extremes[] = {0, 255, 0x80, 0x7f};
    for (uint8_t& x : o.src) x = extremes[(src_type == "u8" ? 0 : 2) + int(rng() % 2)];
    // 8-bit weights, and 7-bit ones (a reduce_range export's), which the
    // split products multiply whole.
    for (int bits : {8, 7}) {
      const int8_t weights[] = {-128, 127, -127, 126, 1, -1}, narrow[] = {-64, 63, -63, 62, 1, -1};
      for (int8_t& w : o.weights) w = (bits == 8 ? weights : narrow)[rng() % 6];
      for (float& b : o.bias) b = 0;
      for (float& scale : o.scales) scale = bits == 8 ? 2e-5f : 4e-5f;
      for (bool any_layout : {false, true}) {
        SCOPED_TRACE(src_type + " " + std::to_string(bits) + "-bit weights" +
                     (any_layout ? " in oneDNN's layouts" : ""));
        PrimitiveSpec spec = convolution(c, o);
        spec.any_activation_layout = spec.any_weights_layout = any_layout;
        std::vector<uint8_t> want = reference(c, o, spec.dst.dims);
        EXPECT_EQ(run(spec, o), want);
        EXPECT_GT(std::set<uint8_t>(want.begin(), want.end()).size(), 20u);
      }
    }
  }
}

// Without VNNI an 8-bit convolution and matmul run as two exact jit
// products (int8_split_product.h), not as oneDNN's reference loops; with
// it, as one jit primitive. The int8_without_vnni_* tests run this with
// oneDNN held below VNNI.
TEST(DnnlInt8Primitive, RunsJitKernelsWithOrWithoutVnni) {
  Int8Case c{.src_dims = {1, 32, 9, 9}, .weights_dims = {32, 32, 3, 3}, .relu = true};
  Int8Operands o = random_operands(c, 2);
  PrimitiveSpec conv = convolution(c, o);
  conv.any_activation_layout = conv.any_weights_layout = true;
  PrimitiveSpec matmul = conv;
  matmul.kind = PrimitiveKind::kMatmul;
  matmul.algorithm.clear();
  matmul.src = {{8, 64}, dense({8, 64})};
  matmul.weights = {{64, 16}, {1, 64}};
  matmul.bias = {{1, 16}, {16, 1}};
  matmul.dst = {{8, 16}, dense({8, 16})};
  matmul.quantization.output_scales.resize(16, 1e-4f);
  matmul.any_activation_layout = matmul.any_weights_layout = false;
  for (const PrimitiveSpec& spec : {conv, matmul}) {
    DnnlPrimitive primitive(spec, 1);
    const std::string& implementation = primitive.implementation();
    SCOPED_TRACE(implementation);
    EXPECT_FALSE(dnnl_is_reference_implementation(implementation));
    EXPECT_EQ(implementation.rfind("int8_split:", 0) == 0, !int8_jit_kernels_are_exact());
    EXPECT_EQ(primitive.needs_prepared_weights(), !int8_jit_kernels_are_exact());
  }
}

TEST(DnnlInt8Primitive, PaddingIsTheSourcesZeroPoint) {
  Int8Case c{.src_dims = {1, 8, 6, 6}, .weights_dims = {8, 8, 3, 3}, .padding = 2};
  Int8Operands o = random_operands(c, 3);
  std::fill(o.src.begin(), o.src.end(), uint8_t(c.src_zero_point));  // a real zero everywhere
  o.src[0] = 255;
  PrimitiveSpec spec = convolution(c, o);
  EXPECT_EQ(run(spec, o), reference(c, o, spec.dst.dims));
}

// oneDNN adds the destination's zero point before it rounds (half to even):
// an exact half comes out as ONNX's (which rounds first) with an even zero
// point and one above or below it with an odd one, the bound
// docs/operators.md states.
TEST(DnnlInt8Primitive, ExactHalvesRoundAfterTheZeroPointIsAdded) {
  for (int32_t zero_point : {10, 11}) {
    Int8Case c{.src_dims = {1, 1, 16, 16}, .weights_dims = {1, 1, 1, 1}, .padding = 0, .src_zero_point = 0,
               .dst_zero_point = zero_point};
    Int8Operands o{{}, {1}, {0}, {0.5f}};
    for (int v = 0; v < 256; ++v) o.src.push_back(uint8_t(v));
    PrimitiveSpec spec = convolution(c, o);
    std::vector<uint8_t> got = run(spec, o), want = reference(c, o, spec.dst.dims);
    for (int v = 0; v < 256; ++v) {
      int difference = std::abs(int(got[size_t(v)]) - int(want[size_t(v)]));
      EXPECT_EQ(difference, v % 2 == 1 && zero_point % 2 == 1 ? 1 : 0) << "accumulator " << v;
    }
  }
}

TEST(DnnlInt8Primitive, MatmulWithScalesPerColumn) {
  const int64_t m = 5, k = 40, n = 12;
  Int8Case c{.src_dims = {m, k, 1, 1}, .weights_dims = {n, k, 1, 1}, .padding = 0, .dst_type = "s8",
             .dst_zero_point = -7};
  Int8Operands o = random_operands(c, 11);
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.src = {{m, k}, dense({m, k})};
  s.weights = {{k, n}, {1, k}};  // the OIHW weights read transposed, as nn.dense does
  s.bias = {{1, n}, {n, 1}};
  s.dst = {{m, n}, dense({m, n})};
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.quantization = {"u8", "s8", "s8", o.scales, c.src_zero_point, c.dst_zero_point};
  std::vector<uint8_t> want = reference(c, o, {m, n, 1, 1});  // the 1x1 convolution of m images
  EXPECT_EQ(run(s, o), want);
}

TEST(DnnlInt8Primitive, WhatIsNotRunQuantizedIsRefused) {
  Int8Case c{.src_dims = {1, 8, 6, 6}, .weights_dims = {8, 8, 3, 3}};
  Int8Operands o = random_operands(c, 5);
  PrimitiveSpec binary = convolution(c, o);
  binary.post_ops.push_back({.kind = PrimitivePostOp::Kind::kBinary, .algorithm = "binary_add", .input = 3,
                             .operand = {{1, 8, 1, 1}, dense({1, 8, 1, 1})}});
  EXPECT_THROW(
      {
        try {
          DnnlPrimitive p(binary, 1);
        } catch (const RuntimeError& e) {
          EXPECT_NE(std::string(e.what()).find("element-wise post-ops only, not binary"), std::string::npos);
          throw;
        }
      },
      RuntimeError);
  PrimitiveSpec winograd = convolution(c, o);
  winograd.algorithm = kWinogradAlgorithm;
  EXPECT_THROW(DnnlPrimitive(winograd, 1), RuntimeError);
}

Manifest manifest_with_int8_primitive() {
  Manifest m = testing::hand_model_manifest();
  m.hashes.model_so = std::string(64, 'a');
  m.hashes.weights_bin = std::string(32, 'b');
  Int8Case c{.src_dims = {1, 8, 6, 6}, .weights_dims = {8, 8, 3, 3}};
  m.primitives = {convolution(c, random_operands(c, 1))};
  m.kernels[0].kind = "dnnl";
  m.kernels[0].primitive = 0;
  return m;
}

TEST(DnnlInt8Primitive, RoundTripsThroughTheManifestAndRefusalsNameTheirPath) {
  Manifest m = manifest_with_int8_primitive();
  std::string text = format_manifest(m);
  EXPECT_EQ(parse_manifest(text).primitives[0], m.primitives[0]);
  struct Bad {
    const char* key;
    nlohmann::json value;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"src_type", "u16", "src_type: unknown value 'u16' (expected one of u8, s8)"},
      {"weights_type", "u8", "weights_type: unknown value 'u8' (expected one of s8)"},
      {"output_scales", {0.1, 0.2}, "output_scales: expected 1 or 8 (one per output channel) values, got 2"},
      {"output_scales", {-1.0}, "output_scales[0]: expected a positive finite number, got number -1"},
      {"src_zero_point", 256, "src_zero_point: expected an integer in [0, 255], got 256"},
      {"colour", "red", "colour: unknown field"},
  };
  nlohmann::json document = nlohmann::json::parse(text);
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.key);
    nlohmann::json changed = document;
    changed["primitives"][0]["quantization"][bad.key] = bad.value;
    std::string error = testing::manifest_parse_error(changed);
    EXPECT_EQ(error.rfind("manifest.json: primitives[0].quantization." + bad.message, 0), 0u) << error;
  }
  nlohmann::json pool = document;
  pool["primitives"][0]["kind"] = "pooling";
  pool["primitives"][0]["algorithm"] = "pooling_max";
  pool["primitives"][0]["kernel"] = {2, 2};
  pool["primitives"][0].erase("weights");
  pool["primitives"][0].erase("weights_input");
  // A pool's quantization is an 8-bit max pool's element type alone.
  std::string error = testing::manifest_parse_error(pool);
  EXPECT_NE(error.find("primitives[0].quantization.dst_zero_point: unknown field"), std::string::npos) << error;
  pool["primitives"][0]["quantization"] = {{"src_type", "u8"}, {"dst_type", "s8"}};
  error = testing::manifest_parse_error(pool);
  EXPECT_NE(error.find("primitives[0].quantization.dst_type: an 8-bit max pool writes its source's type, u8"),
            std::string::npos) << error;
  pool["primitives"][0]["algorithm"] = "pooling_avg_include_padding";
  error = testing::manifest_parse_error(pool);
  EXPECT_NE(error.find("primitives[0].quantization: only a max pool without post-ops is 8-bit"), std::string::npos)
      << error;
}

}  // namespace dnnl_int8_primitive_test
}  // namespace switchyard
