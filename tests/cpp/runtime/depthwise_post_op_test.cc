// A 1x1 convolution with a fused depthwise convolution (oneDNN's depthwise
// post-op) against plain loops: shapes oneDNN runs as one kernel and shapes
// it chains through a buffer of its own, with and without biases, strides 1
// and 2, channels that do not fill a block, depthwise weights prepared once
// or reordered in every call; and the specs it cannot make, named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "primitive_buffers.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard::testing {
namespace depthwise_post_op_test {

using Dims = std::vector<int64_t>;

struct FusedCase {
  const char* name;
  int64_t in, channels, height, width, stride;
  bool depthwise_bias;
};

float clip6(double v) { return float(std::min(6.0, std::max(0.0, v))); }

struct Fused {
  FusedCase c;
  int64_t out_h, out_w;
  int block = dnnl_channel_block();
  PrimitiveSpec spec;
  std::vector<float> x, w1, b1, wd, bd, expected;

  explicit Fused(const FusedCase& given) : c(given) {
    out_h = (c.height + 2 - 3) / c.stride + 1;
    out_w = (c.width + 2 - 3) / c.stride + 1;
    x = random_values(size_t(c.in * c.height * c.width), 1);
    w1 = random_values(size_t(c.channels * c.in), 2);
    b1 = random_values(size_t(c.channels), 3);
    wd = random_values(size_t(c.channels * 9), 4);
    bd = random_values(size_t(c.channels), 5);
    spec = convolution_spec("convolution_direct",
                            {{1, c.in, c.height, c.width}, dense({1, c.in, c.height, c.width})},
                            {{c.channels, c.in, 1, 1}, dense({c.channels, c.in, 1, 1})},
                            {{1, c.channels, out_h, out_w}, {}, "nChw" + std::to_string(block) + "c"});
    PrimitiveSpec& s = spec;
    s.any_weights_layout = s.any_activation_layout = true;
    PrimitivePostOp clip{PrimitivePostOp::Kind::kEltwise, "eltwise_clip", 0, 6};
    PrimitivePostOp depthwise;
    depthwise.kind = PrimitivePostOp::Kind::kDepthwise;
    depthwise.input = 3;
    depthwise.operand = {{c.channels, 1, 1, 3, 3}, dense({c.channels, 1, 1, 3, 3})};
    depthwise.bias_input = c.depthwise_bias ? 4 : -1;
    depthwise.stride = c.stride;
    depthwise.padding = 1;
    s.post_ops = {clip, depthwise, clip};
    expected = reference();
  }

  // clip(depthwise(clip(pointwise(x) + b1)) + bd), in NCHW.
  std::vector<float> reference() const {
    std::vector<float> mid(size_t(c.channels * c.height * c.width));
    for (int64_t o = 0; o < c.channels; ++o)
      for (int64_t p = 0; p < c.height * c.width; ++p) {
        double acc = b1[size_t(o)];
        for (int64_t i = 0; i < c.in; ++i) acc += double(x[size_t(i * c.height * c.width + p)]) * w1[size_t(o * c.in + i)];
        mid[size_t(o * c.height * c.width + p)] = clip6(acc);
      }
    std::vector<float> out(size_t(c.channels * out_h * out_w));
    for (int64_t o = 0; o < c.channels; ++o)
      for (int64_t y = 0; y < out_h; ++y)
        for (int64_t xx = 0; xx < out_w; ++xx) {
          double acc = c.depthwise_bias ? bd[size_t(o)] : 0.0;
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              int64_t iy = y * c.stride + ky - 1, ix = xx * c.stride + kx - 1;
              if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
              acc += double(mid[size_t((o * c.height + iy) * c.width + ix)]) * wd[size_t(o * 9 + ky * 3 + kx)];
            }
          out[size_t((o * out_h + y) * out_w + xx)] = clip6(acc);
        }
    return out;
  }

  // The primitive's result, from channel blocks back to NCHW.
  std::vector<float> run(const DnnlPrimitive& primitive, const PreparedWeights* depthwise_weights) const {
    const int64_t blocks = (c.channels + block - 1) / block, plane = out_h * out_w;
    std::vector<float> blocked(size_t(blocks * block * plane), NAN);
    Workspace workspace(primitive.workspace_bytes());
    const void* inputs[] = {x.data(), w1.data(), b1.data(), wd.data(), bd.data()};
    void* outputs[] = {blocked.data()};
    primitive.execute(inputs, outputs, nullptr, depthwise_weights, workspace.get());
    std::vector<float> out(expected.size());
    for (int64_t o = 0; o < c.channels; ++o)
      for (int64_t p = 0; p < plane; ++p)
        out[size_t(o * plane + p)] = blocked[size_t(((o / block) * plane + p) * block + o % block)];
    return out;
  }
};

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  size_t wrong = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    if (!(std::abs(actual[i] - expected[i]) <= 1e-4f * (1 + std::abs(expected[i]))) && wrong++ < 5)
      ADD_FAILURE() << "element " << i << ": " << actual[i] << " vs " << expected[i];
  EXPECT_EQ(wrong, 0u);
}

TEST(DepthwisePostOp, FusedConvolutionsMatchLoops) {
  const FusedCase cases[] = {
      // MobileNetV2's second block, narrowed: oneDNN 2.6 runs it as one kernel on AVX-512.
      {"8 to 48 at 112x112, stride 2", 8, 48, 112, 112, 2, true},
      {"12 to 40 at 30x30, stride 1, no depthwise bias", 12, 40, 30, 30, 1, false},
      {"10 to 20 at 17x15, stride 2 (a partial block, odd sizes)", 10, 20, 17, 15, 2, true},
  };
  for (const FusedCase& c : cases)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(threads) + " thread(s)");
      Fused t(c);
      DnnlPrimitive primitive(t.spec, threads);
      EXPECT_TRUE(primitive.fuses_depthwise());
      std::cout << c.name << ", " << threads << " thread(s): " << primitive.implementation() << "\n";
      std::shared_ptr<const PreparedWeights> prepared = primitive.prepare_depthwise_weights(t.wd.data());
      expect_close(t.run(primitive, prepared.get()), t.expected);
      expect_close(t.run(primitive, nullptr), t.expected);  // reordered in the call
    }
}

TEST(DepthwisePostOp, SpecsOneDnnCannotMakeAreNamed) {
  auto refusal = [](const PrimitiveSpec& s) {
    try {
      DnnlPrimitive primitive(s, 1);
      return std::string("(made)");
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
  };
  Fused t({"", 8, 16, 12, 12, 1, true});
  PrimitiveSpec plain = t.spec;
  plain.dst = {plain.dst.dims, dense(plain.dst.dims)};
  EXPECT_EQ(refusal(plain), "a depthwise post-op needs a 2-d convolution with a blocked or channels-last destination");
  PrimitiveSpec twice = t.spec;
  twice.post_ops.push_back(twice.post_ops[1]);
  EXPECT_EQ(refusal(twice), "a primitive fuses at most one depthwise convolution");
  PrimitiveSpec other_dims = t.spec;
  other_dims.dst.dims = {1, 16, 6, 6};  // what stride 2 would give
  EXPECT_EQ(refusal(other_dims), "its depthwise post-op computes other dims than the destination's");
}

}  // namespace depthwise_post_op_test
}  // namespace switchyard::testing
