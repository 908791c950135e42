// The runtime's Winograd convolution against plain loops in double: odd
// sizes (partial tiles), batches, both blocked layouts (with padded
// channels), asymmetric padding, every post-op it fuses (a residual added in
// place included), one and two threads; and every refusal.
#include "targets/cpu/runtime/winograd_convolution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "primitive_buffers.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {
namespace winograd_convolution_test {

using testing::random_values;
using testing::Workspace;

using Dims = std::vector<int64_t>;

struct Case {
  int64_t batch, in, out, height, width, block;  // block 0: channels last (nhwc)
  Dims pad_l, pad_r;
};

struct Convolution {
  PrimitiveSpec spec;
  int64_t out_h = 0, out_w = 0;
};

PrimitivePostOp eltwise(const std::string& algorithm, float alpha, float beta) {
  PrimitivePostOp p;
  p.algorithm = algorithm;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// The spec of a convolution of `c` with inputs x (0), w (1), bias (2) and,
// when `residual`, the residual (3) added after the first post-op.
Convolution convolution(const Case& c, const std::vector<PrimitivePostOp>& eltwise_posts, bool residual) {
  Convolution conv;
  conv.out_h = c.height + c.pad_l[0] + c.pad_r[0] - 2;
  conv.out_w = c.width + c.pad_l[1] + c.pad_r[1] - 2;
  const std::string format = c.block ? "nChw" + std::to_string(c.block) + "c" : "nhwc";
  PrimitiveSpec& s = conv.spec;
  s.kind = PrimitiveKind::kConvolution;
  s.algorithm = kWinogradAlgorithm;
  s.src = {{c.batch, c.in, c.height, c.width}, {}, format};
  s.weights = {{c.out, c.in, 3, 3}, {c.in * 9, 9, 3, 1}};
  s.bias = {{c.out}, {1}};
  s.dst = {{c.batch, c.out, conv.out_h, conv.out_w}, {}, format};
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.strides = {1, 1};
  s.dilation = {0, 0};
  s.padding_l = c.pad_l;
  s.padding_r = c.pad_r;
  for (size_t i = 0; i < eltwise_posts.size(); ++i) {
    s.post_ops.push_back(eltwise_posts[i]);
    if (i == 0 && residual) {
      PrimitivePostOp sum;
      sum.kind = PrimitivePostOp::Kind::kSum;
      sum.input = 3;
      sum.operand = s.dst;
      s.post_ops.push_back(sum);
    }
  }
  return conv;
}

int64_t padded(int64_t channels, int64_t block) { return (channels + block - 1) / block * block; }

// Channels per block of a tensor's layout: nhwc is one block of all channels.
int64_t block_of(const PrimitiveTensor& t) {
  if (t.format == "nhwc") return t.dims[1];
  return t.format == "nChw8c" ? 8 : 16;
}

// NCHW to nChw{block}c, padded channels set to `fill`.
std::vector<float> to_blocked(const std::vector<float>& plain, const Dims& d, int64_t block, float fill) {
  const int64_t cp = padded(d[1], block), hw = d[2] * d[3];
  std::vector<float> blocked(size_t(d[0] * cp * hw), fill);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t p = 0; p < hw; ++p)
        blocked[size_t(((n * cp / block + c / block) * hw + p) * block + c % block)] =
            plain[size_t((n * d[1] + c) * hw + p)];
  return blocked;
}

double apply(const PrimitivePostOp& p, double v) {
  if (p.algorithm == "eltwise_relu") return v > 0 ? v : p.alpha * v;
  if (p.algorithm == "eltwise_clip") return std::min(std::max(v, double(p.alpha)), double(p.beta));
  return p.alpha * v + p.beta;  // eltwise_linear
}

// The convolution, bias and post-ops in double, NCHW.
std::vector<float> reference(const Convolution& conv, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias, const std::vector<float>& residual) {
  const PrimitiveSpec& s = conv.spec;
  const int64_t batch = s.src.dims[0], in = s.src.dims[1], h = s.src.dims[2], wd = s.src.dims[3];
  const int64_t out = s.dst.dims[1], oh = conv.out_h, ow = conv.out_w;
  std::vector<float> y(size_t(batch * out * oh * ow));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias[size_t(o)];
          for (int64_t i = 0; i < in; ++i)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                int64_t iy = yy + ky - s.padding_l[0], ix = xx + kx - s.padding_l[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += double(x[size_t(((n * in + i) * h + iy) * wd + ix)]) *
                       w[size_t(((o * in + i) * 3 + ky) * 3 + kx)];
              }
          size_t at = size_t(((n * out + o) * oh + yy) * ow + xx);
          for (const PrimitivePostOp& p : s.post_ops)
            acc = p.kind == PrimitivePostOp::Kind::kSum ? acc + residual[at] : apply(p, acc);
          y[at] = float(acc);
        }
  return y;
}

// Runs the spec through DnnlPrimitive (as an artifact does), or through
// WinogradConvolution split as `split` says, and compares with the
// reference, the residual added in place when there is one.
void expect_matches_reference(const Convolution& conv, int threads,
                              WinogradSplit split = WinogradSplit::kChosen) {
  const PrimitiveSpec& s = conv.spec;
  const Dims& in = s.src.dims;
  const Dims& out = s.dst.dims;
  std::vector<float> x = random_values(size_t(in[0] * in[1] * in[2] * in[3]), 1);
  std::vector<float> w = random_values(size_t(out[1] * in[1] * 9), 2);
  std::vector<float> bias = random_values(size_t(out[1]), 3);
  std::vector<float> residual = random_values(size_t(out[0] * out[1] * out[2] * out[3]), 4);
  std::vector<float> expected = to_blocked(reference(conv, x, w, bias, residual), out, block_of(s.dst), 0.0f);
  bool sums = false;
  for (const PrimitivePostOp& p : s.post_ops) sums |= p.kind == PrimitivePostOp::Kind::kSum;

  std::vector<float> blocked_x = to_blocked(x, in, block_of(s.src), 0.0f);
  // The destination's padded channels start as NaN: they must come out zero.
  std::vector<float> y = sums ? to_blocked(residual, out, block_of(s.dst), NAN)
                              : std::vector<float>(expected.size(), NAN);
  const void* inputs[] = {blocked_x.data(), w.data(), bias.data(), y.data()};
  void* outputs[] = {y.data()};
  if (split == WinogradSplit::kChosen) {
    DnnlPrimitive primitive(s, threads);
    ASSERT_TRUE(primitive.needs_prepared_weights());
    std::shared_ptr<const PreparedWeights> prepared = primitive.prepare_weights(w.data());
    Workspace workspace(primitive.workspace_bytes());
    primitive.execute(inputs, outputs, prepared.get(), nullptr, workspace.get());
  } else {
    WinogradConvolution winograd(s, threads, split);
    ASSERT_EQ(winograd.split(), split);
    std::vector<float> transformed(winograd.transformed_weights_size());
    winograd.transform_weights(w.data(), transformed.data());
    Workspace workspace(winograd.workspace_bytes());
    winograd.execute(inputs, outputs, transformed.data(), workspace.get());
  }
  ASSERT_EQ(y.size(), expected.size());
  // The error is relative to the convolution's magnitudes (at least 1
  // here), which a clip or scale afterwards does not shrink.
  double largest = 1;
  for (float v : expected) largest = std::max(largest, double(std::fabs(v)));
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], expected[i], 1e-5 * largest) << "element " << i << " of " << primitive_kind_name(s.kind);
}

TEST(WinogradConvolution, MatchesLoopsWithPartialTilesBatchesAndPaddedChannels) {
  const std::vector<Case> cases = {
      {2, 16, 24, 13, 17, 8, {1, 1}, {1, 1}},   // partial tiles both ways, a batch of two
      {1, 24, 40, 14, 14, 16, {1, 1}, {1, 1}},  // channels padded to 32 and 48 in blocks of 16
      {1, 8, 16, 9, 11, 8, {0, 2}, {2, 0}},     // asymmetric padding
      {1, 32, 32, 4, 4, 8, {1, 1}, {1, 1}},     // one tile
      {2, 16, 16, 5, 5, 8, {1, 1}, {1, 1}},     // few rows of tiles: threads share a row's channels
      {2, 24, 40, 13, 17, 0, {1, 1}, {1, 1}},   // channels last, partial tiles, a batch of two
      {1, 8, 16, 9, 11, 0, {0, 2}, {2, 0}},     // channels last, asymmetric padding
  };
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << c.in << "->" << c.out << " " << c.height << "x" << c.width << " block "
                                      << c.block << ", " << threads << " threads");
      expect_matches_reference(convolution(c, {}, false), threads);
    }
}

// Both ways of sharing a call among threads (WinogradSplit), on 1 to 3
// threads: bands of uneven sizes, bands that split an image's row of tiles
// and a batch's images, more threads than tiles.
TEST(WinogradConvolution, BandsAndPhasesMatchLoopsOnAnyThreadCount) {
  const std::vector<Case> cases = {
      {2, 16, 24, 13, 17, 8, {1, 1}, {1, 1}},  // 2 x 4 x 5 tiles: 14, 13, 13 on three threads
      {1, 24, 40, 14, 14, 16, {1, 1}, {1, 1}},  // padded channels
      {1, 32, 32, 4, 4, 8, {1, 1}, {1, 1}},     // one tile, more threads than tiles
      {2, 24, 40, 13, 17, 0, {1, 1}, {1, 1}},   // channels last
  };
  for (const Case& c : cases)
    for (int threads : {1, 2, 3})
      for (WinogradSplit split : {WinogradSplit::kBands, WinogradSplit::kPhases}) {
        if (threads == 1 && split == WinogradSplit::kBands) continue;  // one thread runs in phases
        SCOPED_TRACE(::testing::Message() << c.in << "->" << c.out << " " << c.height << "x" << c.width << " block "
                                        << c.block << ", " << threads << " threads, "
                                        << (split == WinogradSplit::kBands ? "bands" : "phases"));
        expect_matches_reference(convolution(c, {eltwise("eltwise_relu", 0, 0)}, true), threads, split);
      }
}

TEST(WinogradConvolution, ChoosesBandsWhereTheTilesOutweighTheWeights) {
  // ResNet's 56x56 and 28x28 layers (196 tiles of 64 channels, 49 of 128)
  // and SqueezeNet's 16 -> 64 at 55x55: bands; 14x14 at 256 channels: the
  // weights dominate.
  EXPECT_EQ(chosen_winograd_split(196, 64, 64, 2), WinogradSplit::kBands);
  EXPECT_EQ(chosen_winograd_split(49, 128, 128, 2), WinogradSplit::kBands);
  EXPECT_EQ(chosen_winograd_split(196, 16, 64, 2), WinogradSplit::kBands);
  EXPECT_EQ(chosen_winograd_split(16, 256, 256, 2), WinogradSplit::kPhases);
  EXPECT_EQ(chosen_winograd_split(196, 64, 64, 1), WinogradSplit::kPhases);
}

TEST(WinogradConvolution, FusesReluClipLinearAndAResidualAddedInPlace) {
  for (int64_t block : {8, 0}) {
    SCOPED_TRACE(block ? "blocks of 8" : "channels last");
    const Case c{1, 16, 16, 10, 10, block, {1, 1}, {1, 1}};
    expect_matches_reference(convolution(c, {eltwise("eltwise_relu", 0, 0)}, false), 1);
    expect_matches_reference(convolution(c, {eltwise("eltwise_relu", 0.1f, 0)}, true), 2);
    expect_matches_reference(
        convolution(c, {eltwise("eltwise_linear", 0.5f, 0.25f), eltwise("eltwise_clip", 0, 0.6f)}, true), 1);
  }
}

TEST(WinogradConvolution, RefusesWhatItDoesNotCompute) {
  const Case c{1, 16, 16, 10, 10, 8, {1, 1}, {1, 1}};
  auto refusal = [&](const std::function<void(PrimitiveSpec&)>& change) {
    PrimitiveSpec s = convolution(c, {}, false).spec;
    change(s);
    return winograd_refusal(s);
  };
  EXPECT_EQ(refusal([](PrimitiveSpec&) {}), "");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.strides = {2, 2}; }), "a stride other than 1");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.dilation = {1, 1}; }), "a dilated window");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.weights.dims = {16, 16, 5, 5}; }), "a window other than 3x3");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.weights.dims = {2, 8, 16, 3, 3}; }), "not a 2-d convolution of one group");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.src.format = ""; }),
            "activations not in a blocked or channels-last layout");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) {
              s.src.dims[1] = s.weights.dims[1] = 12;
              s.weights.strides = {12 * 9, 9, 3, 1};
            }),
            "channels not a multiple of 8");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.post_ops = {eltwise("eltwise_tanh", 0, 0)}; }),
            "the post-op eltwise_tanh");
  try {
    PrimitiveSpec s = convolution(c, {}, false).spec;
    s.strides = {2, 2};
    DnnlPrimitive primitive(s, 1);
    FAIL() << "made";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("the Winograd convolution cannot compute a stride other than 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(WinogradConvolution, RunsOnlyWithPreparedWeights) {
  PrimitiveSpec s = convolution({1, 16, 16, 10, 10, 8, {1, 1}, {1, 1}}, {}, false).spec;
  DnnlPrimitive primitive(s, 1);
  Workspace workspace(primitive.workspace_bytes());
  std::vector<float> data(16 * 10 * 10 * 16, 0.0f);
  const void* inputs[] = {data.data(), data.data(), data.data()};
  void* outputs[] = {data.data()};
  EXPECT_THROW(primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get()), RuntimeError);
}

TEST(WinogradConvolution, PaysOnlyWithEnoughTilesPerImage) {
  EXPECT_TRUE(winograd_pays(convolution({1, 64, 64, 56, 56, 8, {1, 1}, {1, 1}}, {}, false).spec));
  EXPECT_TRUE(winograd_pays(convolution({1, 256, 256, 14, 14, 8, {1, 1}, {1, 1}}, {}, false).spec));
  EXPECT_FALSE(winograd_pays(convolution({1, 512, 512, 7, 7, 8, {1, 1}, {1, 1}}, {}, false).spec));
}

}  // namespace winograd_convolution_test
}  // namespace switchyard
