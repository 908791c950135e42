// oneDNN pools in every layout a kernel's buffer takes, repaired where
// oneDNN departs from the rules (targets/cpu/runtime/dnnl_pooling_repair.h): windows
// of -inf give -inf, and average windows of huge values their double mean.
// Each is checked against plain loops that follow the rules.
#include "targets/cpu/runtime/dnnl_primitive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "primitive_buffers.h"
#include "runtime/thread_pool.h"

namespace switchyard::testing {
namespace dnnl_pooling_repair_test {

using Dims = std::vector<int64_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kChannels = 20, kSide = 4, kOut = 3;  // 20 channels: 8- and 16-channel blocks pad them

// 2x2 windows, stride 2, padding 1: every output's window reaches into the padding.
PrimitiveSpec pool_spec(const std::string& algorithm, const std::string& format) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kPooling;
  s.algorithm = algorithm;
  Dims in{1, kChannels, kSide, kSide}, out{1, kChannels, kOut, kOut};
  s.src = {in, format.empty() ? dense(in) : Dims{}, format};
  s.dst = {out, format.empty() ? dense(out) : Dims{}, format};
  s.strides = {2, 2};
  s.kernel = {2, 2};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {1, 1};
  return s;
}

void run(const PrimitiveSpec& spec, const float* in, float* out) {
  DnnlPrimitive primitive(spec, 1);
  Workspace workspace(primitive.workspace_bytes());
  const void* inputs[] = {in};
  void* outputs[] = {out};
  primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get());
}

// `values` (plain NCHW) converted between the plain layout and `format`.
std::vector<float> reordered(const std::vector<float>& values, const Dims& dims, const std::string& from,
                             const std::string& to) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kReorder;
  s.src = {dims, from.empty() ? dense(dims) : Dims{}, from};
  s.dst = {dims, to.empty() ? dense(dims) : Dims{}, to};
  std::vector<float> out(dnnl_tensor_bytes(s.dst) / sizeof(float));
  run(s, values.data(), out.data());
  return out;
}

// The rules: a max starting at -inf, NaN aside; a mean in double of the
// window's elements (with the padding, for include_padding).
std::vector<float> reference(const std::vector<float>& x, const std::string& algorithm) {
  std::vector<float> out;
  for (int64_t c = 0; c < kChannels; ++c)
    for (int64_t oh = 0; oh < kOut; ++oh)
      for (int64_t ow = 0; ow < kOut; ++ow) {
        float best = -kInf;
        double sum = 0;
        int64_t real = 0;
        for (int64_t ih = 2 * oh - 1; ih < 2 * oh + 1; ++ih)
          for (int64_t iw = 2 * ow - 1; iw < 2 * ow + 1; ++iw) {
            if (ih < 0 || ih >= kSide || iw < 0 || iw >= kSide) continue;
            float v = x[size_t((c * kSide + ih) * kSide + iw)];
            best = std::max(best, v);
            sum += v;
            ++real;
          }
        if (algorithm == "pooling_max") out.push_back(best);
        else out.push_back(float(sum / double(algorithm == "pooling_avg_include_padding" ? 4 : real)));
      }
  return out;
}

// Channels 0-3 are all -inf, 4 alternates -inf and the lowest float (whose
// max stays the lowest float), 5-9 are all 3e38, 10-14 alternate +-3e38,
// the rest random.
std::vector<float> extreme_input() {
  std::vector<float> x = random_values(size_t(kChannels * kSide * kSide), 5);
  for (int64_t c = 0; c < 15; ++c)
    for (int64_t i = 0; i < kSide * kSide; ++i) {
      float& v = x[size_t(c * kSide * kSide + i)];
      if (c < 5) v = c == 4 && i % 2 ? std::numeric_limits<float>::lowest() : -kInf;
      else v = c < 10 || i % 2 ? 3e38f : -3e38f;
    }
  return x;
}

TEST(DnnlPoolingRepair, PoolsInEveryLayoutFollowTheRules) {
  const std::vector<float> x = extreme_input();
  const Dims in{1, kChannels, kSide, kSide}, out{1, kChannels, kOut, kOut};
  for (const std::string format : {"", "nhwc", "nChw8c", "nChw16c"})
    for (const std::string algorithm : {"pooling_max", "pooling_avg_exclude_padding", "pooling_avg_include_padding"}) {
      SCOPED_TRACE(algorithm + " in " + (format.empty() ? "plain" : format));
      PrimitiveSpec spec = pool_spec(algorithm, format);
      std::vector<float> source = reordered(x, in, "", format);
      std::vector<float> result(dnnl_tensor_bytes(spec.dst) / sizeof(float), NAN);
      run(spec, source.data(), result.data());
      // A block's padding channels come out zero, as every kernel leaves them.
      const int64_t block = format == "nChw8c" ? 8 : format == "nChw16c" ? 16 : 0;
      for (size_t i = 0; block && i < result.size(); ++i) {
        if (int64_t(i) / (kOut * kOut * block) * block + int64_t(i) % block >= kChannels) {
          ASSERT_EQ(result[i], 0.0f) << "padding element " << i;
        }
      }
      std::vector<float> got = reordered(result, out, format, "");
      std::vector<float> want = reference(x, algorithm);
      ASSERT_EQ(got.size(), want.size());
      // oneDNN's float sums of the random channels may round otherwise.
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(got[i] == want[i] || std::fabs(got[i] - want[i]) <= 1e-6f) << "output " << i << ": " << got[i]
                                                                               << ", expected " << want[i];
    }
}

// oneDNN's max skips a NaN; the rule lets it win, in every window holding
// one (and only there), whatever the layout.
TEST(DnnlPoolingRepair, ANaNWinsItsMaxPoolWindowsInEveryLayout) {
  std::vector<float> x = random_values(size_t(kChannels * kSide * kSide), 6);
  const size_t plane = size_t(kSide * kSide);
  x[1 * plane + 0] = std::nanf("");                       // corner: one window
  x[3 * plane + size_t(2 * kSide + 3)] = std::nanf("");   // inside: one window
  x[17 * plane + plane - 1] = -std::nanf("");             // the last element
  const Dims in{1, kChannels, kSide, kSide}, out{1, kChannels, kOut, kOut};
  for (const std::string format : {"", "nhwc", "nChw8c", "nChw16c"}) {
    SCOPED_TRACE(format.empty() ? "plain" : format);
    PrimitiveSpec spec = pool_spec("pooling_max", format);
    std::vector<float> source = reordered(x, in, "", format);
    std::vector<float> result(dnnl_tensor_bytes(spec.dst) / sizeof(float));
    run(spec, source.data(), result.data());
    std::vector<float> got = reordered(result, out, format, "");
    int nans = 0;
    for (int64_t c = 0; c < kChannels; ++c)
      for (int64_t oh = 0; oh < kOut; ++oh)
        for (int64_t ow = 0; ow < kOut; ++ow) {
          float best = -kInf;
          bool nan = false;
          for (int64_t ih = 2 * oh - 1; ih < 2 * oh + 1; ++ih)
            for (int64_t iw = 2 * ow - 1; iw < 2 * ow + 1; ++iw) {
              if (ih < 0 || ih >= kSide || iw < 0 || iw >= kSide) continue;
              float v = x[size_t((c * kSide + ih) * kSide + iw)];
              nan |= std::isnan(v);
              best = std::max(best, v);
            }
          float value = got[size_t((c * kOut + oh) * kOut + ow)];
          if (nan) {
            ++nans;
            EXPECT_TRUE(std::isnan(value)) << "channel " << c << " (" << oh << ", " << ow << "): " << value;
          } else {
            EXPECT_EQ(value, best) << "channel " << c << " (" << oh << ", " << ow << ")";
          }
        }
    EXPECT_EQ(nans, 3);
  }
}

// A large pool on two threads, plain and channels last: the source's NaN
// scan runs in chunks on both. A NaN anywhere, the last element included,
// wins its window and only it.
TEST(DnnlPoolingRepair, ANaNAnywhereInALargeSourceWinsOnSeveralThreads) {
  constexpr int64_t kBigSide = 128, kBigOut = 64;  // 20 x 128 x 128: many rows and scan chunks
  std::vector<float> x = random_values(size_t(kChannels * kBigSide * kBigSide), 7);
  ThreadPool pool(2);
  for (const std::string format : {"", "nhwc"}) {
    PrimitiveSpec spec = pool_spec("pooling_max", format);
    spec.src = {{1, kChannels, kBigSide, kBigSide}, {}, format};
    spec.dst = {{1, kChannels, kBigOut, kBigOut}, {}, format};
    if (format.empty()) {
      spec.src.strides = dense(spec.src.dims);
      spec.dst.strides = dense(spec.dst.dims);
    }
    spec.padding_l = spec.padding_r = {0, 0};
    DnnlPrimitive primitive(spec, 2);
    Workspace workspace(primitive.workspace_bytes());
    for (size_t nan_at : {size_t(0), x.size() / 2 + 5, x.size() - 1}) {
      SCOPED_TRACE("NaN at element " + std::to_string(nan_at) + " in " + (format.empty() ? "plain" : format));
      std::vector<float> source = x;
      source[nan_at] = std::nanf("");
      std::vector<float> result(dnnl_tensor_bytes(spec.dst) / sizeof(float));
      const void* inputs[] = {source.data()};
      void* outputs[] = {result.data()};
      auto on_pool = [&pool](int64_t n, int64_t grain, const ParallelBody& body) { pool.parallel_for(n, grain, body); };
      primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get(), on_pool);
      // (c, h, w) of the element, and where its window's output lies.
      const int64_t plane = kBigSide * kBigSide, at = int64_t(nan_at);
      const int64_t c = format.empty() ? at / plane : at % kChannels;
      const int64_t pixel = format.empty() ? at % plane : at / kChannels;
      const int64_t oh = pixel / kBigSide / 2, ow = pixel % kBigSide / 2;
      const int64_t out_at = format.empty() ? (c * kBigOut + oh) * kBigOut + ow : (oh * kBigOut + ow) * kChannels + c;
      int nans = 0;
      for (float v : result) nans += std::isnan(v);
      EXPECT_EQ(nans, 1);
      EXPECT_TRUE(std::isnan(result[size_t(out_at)]));
    }
  }
}

}  // namespace dnnl_pooling_repair_test
}  // namespace switchyard::testing
