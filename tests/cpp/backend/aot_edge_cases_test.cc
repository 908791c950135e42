// The edge cases docs/operators.md defines ("Edge cases"), run through a
// compiled artifact and the reference interpreter on the same inputs: NaN,
// infinities, -0, integer overflow, out-of-range casts and indices, zero
// divisors. Where the rule is a value both must give it bit for bit (a NaN
// matching any NaN); where it is an error both must fail, the artifact
// naming the kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "runtime/primitive_spec.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard::testing {
namespace aot_edge_cases_test {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// @main's inputs, in parameter order, holding `values` (each converted to
// the parameter's dtype; every parameter here is 1-d).
std::map<std::string, NDArray> inputs_of(const IRModule& mod, const std::vector<std::vector<double>>& values) {
  IRModule typed = infer_type(mod);
  std::map<std::string, NDArray> inputs;
  const auto& params = typed.lookup("main")->params;
  for (size_t p = 0; p < params.size(); ++p) {
    NDArray array(as_tensor(params[p]->checked_type())->dtype, {int64_t(values.at(p).size())});
    for (size_t i = 0; i < values[p].size(); ++i) array.set_from_double(int64_t(i), values[p][i]);
    inputs[params[p]->name_hint] = array;
  }
  return inputs;
}

std::string built(const IRModule& mod, const std::string& name) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options("cpu:0"), dir);
  return dir;
}

// Equal bit for bit: same dtype and shape, every element's bytes equal, or
// both NaN. "" when they are, else the first difference.
std::string compare_bits(const NDArray& actual, const NDArray& expected) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return std::string("got ") + dtype_name(actual.dtype()) + " " + actual.shape_string() + ", expected " +
           dtype_name(expected.dtype()) + " " + expected.shape_string();
  size_t bytes = size_t(dtype_bytes(actual.dtype()));
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get_as_double(i), e = expected.get_as_double(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    const auto* pa = static_cast<const uint8_t*>(actual.data()) + size_t(i) * bytes;
    const auto* pe = static_cast<const uint8_t*>(expected.data()) + size_t(i) * bytes;
    if (std::memcmp(pa, pe, bytes) != 0)
      return "element " + std::to_string(i) + " is " + std::to_string(a) + (std::signbit(a) ? " (sign set)" : "") +
             ", expected " + std::to_string(e) + (std::signbit(e) ? " (sign set)" : "");
  }
  return "";
}

// Runs `text` both ways on `values`; returns the interpreter's outputs (and
// the artifact's directory in `artifact`, when given).
std::vector<NDArray> expect_same(const std::string& name, const std::string& text,
                                 const std::vector<std::vector<double>>& values, std::string* artifact = nullptr) {
  IRModule mod = parse_module(text, name + ".sy");
  std::map<std::string, NDArray> inputs = inputs_of(mod, values);
  std::vector<NDArray> expected = interpret(mod, inputs);
  std::string dir = built(mod, name);
  if (artifact) *artifact = dir;
  std::vector<NDArray> actual = run_artifact(dir, inputs);
  EXPECT_EQ(actual.size(), expected.size()) << name;
  for (size_t i = 0; i < actual.size() && i < expected.size(); ++i)
    EXPECT_EQ(compare_bits(actual[i], expected[i]), "") << name << " output " << i;
  return expected;
}

// Both ways must fail: the interpreter with `words`, the artifact with
// `words` after the label of its kernel 0.
void expect_both_fail(const std::string& name, const std::string& text, const std::vector<std::vector<double>>& values,
                      const std::string& words) {
  IRModule mod = parse_module(text, name + ".sy");
  std::map<std::string, NDArray> inputs = inputs_of(mod, values);
  try {
    interpret(mod, inputs);
    ADD_FAILURE() << name << ": the interpreter did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  std::string dir = built(mod, name);
  try {
    run_artifact(dir, inputs);
    ADD_FAILURE() << name << ": the artifact did not fail";
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("kernel 0 '"), std::string::npos) << message;
    EXPECT_NE(message.find(name + ".sy:"), std::string::npos) << "names where the kernel came from: " << message;
    EXPECT_NE(message.find(": " + words), std::string::npos) << message;
  }
}

const std::vector<double> kSpecial = {kNaN, -kNaN, kInf, -kInf, -0.0, 0.0, -2.5, 0.5, 1e30, -1e30, 3, -1};

TEST(AotEdgeCases, MaximumAndMinimumPropagateNaNFromEitherOperand) {
  expect_same("extrema",
              "def @main(%a: Tensor[(8), float32], %b: Tensor[(8), float32]) {\n"
              "  (maximum(%a, %b), minimum(%a, %b))\n"
              "}\n",
              {{kNaN, 1, -kInf, -0.0, 0.0, kNaN, 2, kInf}, {1, kNaN, 3, 0.0, -0.0, kNaN, kInf, -kInf}});
  expect_same("extrema_half",
              "def @main(%a: Tensor[(4), float16], %b: Tensor[(4), float16]) {\n"
              "  (maximum(%a, %b), minimum(%a, %b))\n"
              "}\n",
              {{kNaN, 1, -kInf, -0.0}, {1, kNaN, 3, 0.0}});
}

TEST(AotEdgeCases, ReluAndClipIgnoreNaNAndGivePlusZeroForMinusZero) {
  std::vector<NDArray> out = expect_same("relu_clip",
                                         "def @main(%x: Tensor[(12), float32]) {\n"
                                         "  (nn.relu(%x), clip(%x, a_min=-1, a_max=1))\n"
                                         "}\n",
                                         {kSpecial});
  // kSpecial: NaN, -NaN, inf, -inf, -0, 0, ...
  const std::vector<double> relu = {0, 0, kInf, 0, 0, 0, 0, 0.5, 1e30, 0, 3, 0};
  const std::vector<double> clip = {-1, -1, 1, -1, -0.0, 0, -1, 0.5, 1, -1, 1, -1};
  for (int64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(out[0].get_as_double(i), double(float(relu[size_t(i)]))) << "relu, element " << i;
    EXPECT_EQ(out[1].get_as_double(i), clip[size_t(i)]) << "clip, element " << i;
  }
  EXPECT_FALSE(std::signbit(out[0].get_as_double(4))) << "relu(-0) is +0";
  EXPECT_TRUE(std::signbit(out[1].get_as_double(4))) << "clip(-0, -1, 1) is -0";
}

TEST(AotEdgeCases, ReductionsAndMaxPoolLetNaNWin) {
  expect_same("max_nan",
              "def @main(%x: Tensor[(6), float32]) {\n"
              "  (max(%x), sum(%x), mean(%x))\n"
              "}\n",
              {{1, kNaN, 3, -kInf, 2, 0}});
  expect_same("max_inf",
              "def @main(%x: Tensor[(3), float32]) {\n"
              "  (max(%x), sum(%x))\n"
              "}\n",
              {{-kInf, -kInf, -kInf}});
  // float16 pools take the generated loop; a NaN anywhere in the window wins.
  expect_same("max_pool_half",
              "def @main(%x: Tensor[(8), float16]) {\n"
              "  %0 = reshape(%x, newshape=[1, 1, 2, 4]);\n"
              "  nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2])\n"
              "}\n",
              {{1, 5, kNaN, 0, 2, kNaN, 3, 4}});
}

// Denormals are kept, never flushed to zero, by generated loops and by
// oneDNN's products and convolutions: every value here is an integer number
// of 2^-149 steps and every product and sum below is exact, so both ways
// give the same bits, and a flush would give zeros.
TEST(AotEdgeCases, DenormalsAreNotFlushed) {
  const double step = std::ldexp(1.0, -149);
  std::vector<double> x;
  for (int i = 0; i < 16; ++i) x.push_back((3 + 5 * i) * step * (i % 2 ? -1 : 1));
  std::vector<NDArray> out = expect_same(
      "denormals",
      "def @main(%x: Tensor[(16), float32]) {\n"
      "  %0 = reshape(%x, newshape=[1, 16, 1, 1]);\n"
      "  %1 = nn.conv2d(%0, broadcast_to(2f, shape=[8, 16, 1, 1]));\n"
      "  %2 = nn.dense(reshape(%x, newshape=[2, 8]), broadcast_to(4f, shape=[3, 8]));\n"
      "  (multiply(%x, 2f), add(%x, %x), %1, %2, nn.relu(%x))\n"
      "}\n",
      {x});
  for (const NDArray& o : out)
    for (int64_t i = 0; i < o.numel(); ++i) {
      double v = o.get_as_double(i);
      EXPECT_TRUE(v == 0 || std::abs(v) < std::ldexp(1.0, -126)) << "the case exercises denormal results only";
    }
  EXPECT_NE(out[2].get_as_double(0), 0) << "the convolution's sum is a denormal";
}

// Each multiply and add rounds on its own, as the interpreter rounds it: a
// fused multiply-add would give (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24, not 0.
TEST(AotEdgeCases, AMultiplyThenAddRoundsTwice) {
  const double x = 1 + std::ldexp(1.0, -12), z = -(1 + std::ldexp(1.0, -11));
  std::vector<NDArray> out = expect_same("no_contraction",
                                         "def @main(%x: Tensor[(64), float32], %z: Tensor[(64), float32]) {\n"
                                         "  add(multiply(%x, %x), %z)\n"
                                         "}\n",
                                         {std::vector<double>(64, x), std::vector<double>(64, z)});
  EXPECT_EQ(out[0].get_as_double(0), 0.0);
}

// The algorithms of the oneDNN primitives the artifact at `dir` runs.
std::vector<std::string> primitive_algorithms(const std::string& dir) {
  auto artifact = Artifact::load(dir);
  std::vector<std::string> algorithms;
  for (const PrimitiveSpec& spec : artifact->manifest().primitives) algorithms.push_back(spec.algorithm);
  return algorithms;
}

bool runs(const std::string& dir, const std::string& algorithm) {
  std::vector<std::string> algorithms = primitive_algorithms(dir);
  return std::find(algorithms.begin(), algorithms.end(), algorithm) != algorithms.end();
}

const double kLowestFloat = double(std::numeric_limits<float>::lowest());

// oneDNN starts a max-pool window at the lowest float, so a window of -inf
// (or with no element in the data) gave -3.4e38, not -inf.
TEST(AotEdgeCases, MaxPoolOfMinusInfinityWindowsIsMinusInfinity) {
  std::string dir;
  std::vector<NDArray> out =
      expect_same("max_pool_minus_inf",
                  "def @main(%x: Tensor[(16), float32]) {\n"
                  "  nn.max_pool2d(reshape(%x, newshape=[1, 1, 4, 4]), pool_size=[2, 2], strides=[2, 2])\n"
                  "}\n",
                  {{-kInf, -kInf, 1, 2, -kInf, -kInf, 3, -kInf, kLowestFloat, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,
                    -kInf}},
                  &dir);
  EXPECT_TRUE(runs(dir, "pooling_max")) << "oneDNN pools";
  ASSERT_EQ(out.at(0).numel(), 4);
  EXPECT_EQ(out[0].get_as_double(0), -kInf);
  EXPECT_EQ(out[0].get_as_double(1), 3);
  EXPECT_EQ(out[0].get_as_double(2), kLowestFloat) << "the lowest float itself stays";
  EXPECT_EQ(out[0].get_as_double(3), -kInf);
  // Windows reaching into the padding, whose only data is -inf.
  out = expect_same("max_pool_padded_minus_inf",
                    "def @main(%x: Tensor[(4), float32]) {\n"
                    "  nn.max_pool2d(reshape(%x, newshape=[1, 1, 2, 2]), pool_size=[2, 2], padding=[1, 1])\n"
                    "}\n",
                    {{-kInf, -kInf, -kInf, 5}}, &dir);
  EXPECT_TRUE(runs(dir, "pooling_max")) << "oneDNN pools";
  EXPECT_EQ(out.at(0).get_as_double(0), -kInf);
  EXPECT_EQ(out.at(0).get_as_double(8), 5);
  // An epilogue after the pool sees -inf too (a oneDNN post-op would have
  // scaled the lowest float instead).
  out = expect_same("max_pool_minus_inf_scaled",
                    "def @main(%x: Tensor[(4), float32]) {\n"
                    "  multiply(nn.max_pool2d(reshape(%x, newshape=[1, 1, 2, 2]), pool_size=[1, 2]), 0.5f)\n"
                    "}\n",
                    {{-kInf, -kInf, 1, -kInf}});
  EXPECT_EQ(out.at(0).get_as_double(0), -kInf);
  // ceil_mode's last window starts past the data: it holds no element.
  out = expect_same("max_pool_empty_window",
                    "def @main(%x: Tensor[(5), float32]) {\n"
                    "  nn.max_pool2d(reshape(%x, newshape=[1, 1, 1, 5]), pool_size=[1, 1], strides=[1, 3], "
                    "ceil_mode=True)\n"
                    "}\n",
                    {{1, 2, 3, 4, 5}});
  ASSERT_EQ(out.at(0).numel(), 3);
  EXPECT_EQ(out[0].get_as_double(2), -kInf);
  // The max reduction, one output at a time (axis 1) and in tiles (axis 0).
  expect_same("max_minus_inf_axes",
              "def @main(%x: Tensor[(12), float32]) {\n"
              "  %0 = reshape(%x, newshape=[3, 4]);\n"
              "  (max(%0, axis=[0]), max(%0, axis=[1]), max(%0, axis=[1], keepdims=True))\n"
              "}\n",
              {{-kInf, 1, 2, 3, -kInf, -kInf, -kInf, -kInf, -kInf, kLowestFloat, -kInf, 4}});
}

// The same between convolutions, where the pool reads (and writes) the
// layout oneDNN's convolutions keep: the repair finds elements through it.
TEST(AotEdgeCases, MaxPoolOfMinusInfinityInOneDnnLayouts) {
  std::vector<double> x(48, 1.0), w0(9, 1.0), w1(9, 1e-30);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t at : {0, 1, 4, 5}) x[size_t(c * 16 + at)] = -kInf;  // each channel's top-left window
  const std::string pool = "nn.max_pool2d(nn.conv2d(reshape(%x, newshape=[1, 3, 4, 4]), reshape(%w0, "
                           "newshape=[3, 3, 1, 1])), pool_size=[2, 2], strides=[2, 2])";
  for (bool then_convolve : {false, true}) {
    SCOPED_TRACE(then_convolve ? "then a convolution" : "the model's output");
    std::string text =
        "def @main(%x: Tensor[(48), float32], %w0: Tensor[(9), float32], %w1: Tensor[(9), float32]) {\n  " +
        (then_convolve ? "nn.conv2d(" + pool + ", reshape(%w1, newshape=[3, 3, 1, 1]))" : pool) + "\n}\n";
    std::string dir;
    std::vector<NDArray> out = expect_same(then_convolve ? "max_pool_laid_out_between" : "max_pool_laid_out",
                                           text, {x, w0, w1}, &dir);
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(out.at(0).get_as_double(c * 4), -kInf) << "channel " << c;
    auto artifact = Artifact::load(dir);
    bool laid_out = false;
    for (const PrimitiveSpec& spec : artifact->manifest().primitives)
      laid_out |= spec.algorithm == "pooling_max" && !spec.src.format.empty();
    EXPECT_TRUE(laid_out) << "the pool reads a oneDNN layout";
  }
}

// oneDNN sums an average pool's window in float, so 3e38 + 3e38 overflowed
// to inf; the rule (and the generated loop) sums in double.
TEST(AotEdgeCases, AveragePoolsOfHugeValuesSumInDouble) {
  const double h = 3e38;
  std::string dir;
  std::vector<NDArray> out = expect_same(
      "avg_pool_huge",
      "def @main(%x: Tensor[(16), float32]) {\n"
      "  %0 = reshape(%x, newshape=[1, 1, 4, 4]);\n"
      "  (nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2]),\n"
      "   nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2], padding=[1, 1], count_include_pad=True),\n"
      "   nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2], padding=[1, 1]),\n"
      "   nn.global_avg_pool2d(%0))\n"
      "}\n",
      {{h, h, h, -h, h, h, h, -h, -h, -h, 1, 2, h, h, 3, 4}}, &dir);
  EXPECT_TRUE(runs(dir, "pooling_avg_exclude_padding")) << "oneDNN pools";
  EXPECT_TRUE(runs(dir, "pooling_avg_include_padding")) << "oneDNN pools";
  EXPECT_EQ(out.at(0).get_as_double(0), double(float(h))) << "the mean of four 3e38s";
  EXPECT_EQ(out.at(0).get_as_double(1), 0) << "the mean of 3e38, -3e38, 3e38, -3e38";
  EXPECT_TRUE(std::isfinite(out.at(3).get_as_double(0)));
}

// Statistics are taken in double (docs/operators.md), so a row of +-3e38
// normalises to +-1 rather than to the 0 of a float variance overflowed to
// inf; batch_norm's (x - mean) is in double too.
TEST(AotEdgeCases, NormalisationOfHugeValuesTakesStatisticsInDouble) {
  const double h = 3e38;
  std::vector<NDArray> out = expect_same("layer_norm_huge",
                                         "def @main(%x: Tensor[(8), float32], %g: Tensor[(4), float32], "
                                         "%b: Tensor[(4), float32]) {\n"
                                         "  nn.layer_norm(reshape(%x, newshape=[2, 4]), %g, %b)\n"
                                         "}\n",
                                         {{h, -h, h, -h, h, h, h, h}, {1, 2, 1, 1}, {0, 0, 0.5, 0}});
  const std::vector<double> normalised = {1, -2, 1.5, -1, 0, 0, 0.5, 0};
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.at(0).get_as_double(i), normalised[size_t(i)]) << "element " << i;
  out = expect_same("batch_norm_huge",
                    "def @main(%x: Tensor[(4), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], "
                    "%m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
                    "  %0 = nn.batch_norm(reshape(%x, newshape=[1, 2, 2, 1]), %g, %b, %m, %v);\n"
                    "  %0.0\n"
                    "}\n",
                    {{h, -h, -h, h}, {1, 0.5}, {0, 1}, {-h, h}, {1e38, 1e38}});
  EXPECT_TRUE(std::isfinite(out.at(0).get_as_double(0))) << "(3e38 - -3e38) / 1e19";
  expect_same("mean_huge",
              "def @main(%x: Tensor[(8), float32]) {\n"
              "  %0 = reshape(%x, newshape=[2, 4]);\n"
              "  (mean(%x), sum(%x), mean(%0, axis=[0]), mean(%0, axis=[1]))\n"
              "}\n",
              {{h, h, h, -h, h, h, -h, -h}});
}

// Softmax of a row of -inf is NaN (0 / 0, as PyTorch), -inf elements of a
// row get 0, and huge magnitudes cannot overflow (the row's maximum is
// subtracted first); log_softmax, as the ONNX importer builds it, agrees.
TEST(AotEdgeCases, SoftmaxOfMinusInfinityRowsAndHugeValues) {
  const double h = 3e38;
  const std::string text =
      "def @main(%x: Tensor[(16), float32]) {\n"
      "  %0 = reshape(%x, newshape=[4, 4]);\n"
      "  %1 = subtract(%0, max(%0, axis=[-1], keepdims=True));\n"
      "  (nn.softmax(%0), subtract(%1, log(sum(exp(%1), axis=[-1], keepdims=True))))\n"
      "}\n";
  std::vector<NDArray> out = expect_same(
      "softmax_extremes", text, {{-kInf, -kInf, -kInf, -kInf, -kInf, 0, -kInf, 0, h, -h, h, -h, kInf, 1, 2, 3}});
  const std::vector<double> softmax = {kNaN, kNaN, kNaN, kNaN, 0, 0.5, 0, 0.5, 0.5, 0, 0.5, 0, kNaN, kNaN, kNaN, kNaN};
  for (int64_t i = 0; i < 16; ++i) {
    double got = out.at(0).get_as_double(i), want = softmax[size_t(i)];
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << "element " << i << " is " << got;
  }
}

TEST(AotEdgeCases, FloatMathOfSpecialValuesMatches) {
  expect_same("float_math",
              "def @main(%x: Tensor[(12), float32]) {\n"
              "  (negative(%x), abs(%x), floor(%x), ceil(%x), round(%x), sqrt(%x), add(%x, %x), multiply(%x, 0f),\n"
              "   divide(%x, 0f), divide(1f, %x), less(%x, 0f), equal(%x, %x))\n"
              "}\n",
              {kSpecial});
}

TEST(AotEdgeCases, CastsSaturateToInt64ThenWrapAndSendNaNToZero) {
  std::vector<double> values = {kNaN, kInf, -kInf, 3e9, -3e9, 300, -1.5, 2.7, -0.0, 1e19, -1e19, 255.9};
  std::vector<NDArray> out = expect_same("casts",
                                         "def @main(%x: Tensor[(12), float32]) {\n"
                                         "  (cast(%x, dtype=\"int32\"), cast(%x, dtype=\"int8\"), "
                                         "cast(%x, dtype=\"uint8\"), cast(%x, dtype=\"int64\"), "
                                         "cast(%x, dtype=\"bool\"))\n"
                                         "}\n",
                                         {values});
  EXPECT_EQ(out[0].get_as_double(0), 0) << "NaN to 0";
  EXPECT_EQ(out[3].get_as_double(1), 9223372036854775807.0) << "inf saturates to INT64_MAX";
  EXPECT_EQ(out[0].get_as_double(3), double(int32_t(uint32_t(3000000000u)))) << "3e9 wraps to int32";
  EXPECT_EQ(out[1].get_as_double(5), 44) << "300 wraps to int8";
  EXPECT_EQ(out[4].get_as_double(0), 1) << "NaN is true";
  EXPECT_EQ(out[4].get_as_double(8), 0) << "-0 is false";
}

// A cast of a clip within +-2^30 converts through int32 (a quantize's
// loop): clip(NaN) is a_min, and the integers wrap as the saturating cast's.
TEST(AotEdgeCases, CastsOfClipsMatchTheSaturatingCast) {
  std::vector<double> values = {kNaN, -kNaN, kInf, -kInf, -0.0, 0.0, -2.5, 0.5, 1e30, -1e30, 3, -1,
                                70000, -70000, 255.9, 1e9, -1e9, 2e9, -2e9, 300, -129, 128};
  std::vector<NDArray> out = expect_same("clipped_casts",
                                         "def @main(%x: Tensor[(22), float32]) {\n"
                                         "  (cast(clip(%x, a_min=0, a_max=255), dtype=\"uint8\"), "
                                         "cast(clip(%x, a_min=-1e9, a_max=1e9), dtype=\"int8\"), "
                                         "cast(clip(%x, a_min=-1e9, a_max=1e9), dtype=\"uint16\"), "
                                         "cast(clip(%x, a_min=-1e9, a_max=1e9), dtype=\"int32\"))\n"
                                         "}\n",
                                         {values});
  EXPECT_EQ(out[0].get_as_double(0), 0) << "clip(NaN) is a_min";
  EXPECT_EQ(out[0].get_as_double(2), 255) << "inf clips to 255";
  EXPECT_EQ(out[1].get_as_double(12), double(int8_t(uint8_t(70000 & 0xFF)))) << "70000 wraps to int8";
  EXPECT_EQ(out[3].get_as_double(15), 1e9);
}

TEST(AotEdgeCases, IntegerArithmeticWrapsTwosComplement) {
  const double max32 = 2147483647, min32 = -2147483648.0;
  expect_same("int32_wraps",
              "def @main(%a: Tensor[(6), int32], %b: Tensor[(6), int32]) {\n"
              "  (add(%a, %b), subtract(%a, %b), multiply(%a, %b), negative(%a), abs(%a), divide(%a, %b))\n"
              "}\n",
              {{max32, min32, min32, 65536, -7, 7}, {1, -1, -1, 65536, 2, -2}});
  expect_same("int8_wraps",
              "def @main(%a: Tensor[(4), int8], %b: Tensor[(4), int8]) {\n"
              "  (add(%a, %b), multiply(%a, %b), negative(%a), divide(%a, %b))\n"
              "}\n",
              {{127, -128, -128, 100}, {1, -1, 2, 3}});
  const double two62 = 4611686018427387904.0;
  expect_same("int64_wraps",
              "def @main(%a: Tensor[(3), int64], %b: Tensor[(3), int64]) {\n"
              "  (add(%a, %b), multiply(%a, %b))\n"
              "}\n",
              {{two62, -two62, two62}, {two62, -two62 * 2, 4}});
}

TEST(AotEdgeCases, TakeClipAndWrapAgreeOnOutOfRangeIndices) {
  expect_same("take_modes",
              "def @main(%x: Tensor[(4), float32], %i: Tensor[(6), int64]) {\n"
              "  (take(%x, %i, axis=0, mode=\"clip\"), take(%x, %i, axis=0, mode=\"wrap\"))\n"
              "}\n",
              {{10, 11, 12, 13}, {-9, -1, 0, 3, 4, 1000}});
}

TEST(AotEdgeCases, IntegerDivisionByZeroFailsBothWays) {
  expect_both_fail("divide_by_zero",
                   "def @main(%a: Tensor[(4), int32], %b: Tensor[(4), int32]) {\n"
                   "  add(divide(%a, %b), 1i32)\n"
                   "}\n",
                   {{1, 2, 3, 4}, {1, 0, 2, 1}}, "integer division by zero");
  // Inside a reduction's prologue, which the element lowering builds.
  expect_both_fail("divide_by_zero_summed",
                   "def @main(%a: Tensor[(4), int64], %b: Tensor[(4), int64]) {\n"
                   "  sum(divide(%a, %b))\n"
                   "}\n",
                   {{1, 2, 3, 4}, {1, 1, 0, 1}}, "integer division by zero");
}

TEST(AotEdgeCases, IntegerPowerWithANegativeExponentFailsBothWays) {
  expect_both_fail("negative_exponent",
                   "def @main(%a: Tensor[(3), int32], %b: Tensor[(3), int32]) {\n"
                   "  power(%a, %b)\n"
                   "}\n",
                   {{2, 3, 4}, {1, -1, 2}}, "integer power with a negative exponent");
}

TEST(AotEdgeCases, TakeFastOutOfRangeFailsBothWays) {
  const std::string text =
      "def @main(%x: Tensor[(3), float32], %i: Tensor[(2), int32]) {\n"
      "  negative(take(%x, %i, axis=0, mode=\"fast\"))\n"
      "}\n";
  expect_both_fail("take_fast_past_end", text, {{1, 2, 3}, {0, 3}}, "take index");
  expect_both_fail("take_fast_negative", text, {{1, 2, 3}, {-1, 0}}, "take index");
  expect_same("take_fast_in_range", text, {{1, 2, 3}, {2, 0}});
}

// Epilogues of a oneDNN product (post-ops or the generated loop after it)
// keep a NaN row NaN; relu and clip, which ignore NaN, have their own test.
TEST(AotEdgeCases, ProductEpiloguesPropagateNaN) {
  const std::vector<double> x = {kNaN, 1, -1, 2, 0.5, -0.5, 1, 1};
  const std::vector<double> w = {1, 1, 1, 1, -1, -1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
  const std::vector<double> side = {1, kNaN, -2, 0, 3, 1, -1, 0};
  const std::vector<std::string> epilogues = {
      "tanh(%0)", "sigmoid(%0)", "abs(%0)", "sqrt(%0)", "log(%0)", "exp(%0)", "negative(%0)",
      "maximum(%0, %1)", "minimum(%0, %1)", "add(%0, %1)", "multiply(%0, 0.5f)",
      "multiply(multiply(%0, 0.5f), add(erf(multiply(%0, 0.707106769f)), 1f))"};
  for (size_t k = 0; k < epilogues.size(); ++k) {
    SCOPED_TRACE(epilogues[k]);
    std::string text =
        "def @main(%x: Tensor[(8), float32], %w: Tensor[(16), float32], %v: Tensor[(8), float32]) {\n"
        "  %0 = nn.dense(reshape(%x, newshape=[2, 4]), reshape(%w, newshape=[4, 4]));\n"
        "  %1 = reshape(%v, newshape=[2, 4]);\n  " + epilogues[k] + "\n}\n";
    IRModule mod = parse_module(text, "epilogue.sy");
    std::map<std::string, NDArray> inputs = inputs_of(mod, {x, w, side});
    std::vector<NDArray> expected = interpret(mod, inputs);
    std::vector<NDArray> actual = run_artifact(built(mod, "epilogue_" + std::to_string(k)), inputs);
    EXPECT_EQ(compare_arrays(actual.at(0), expected.at(0), 1e-5, 1e-5), "");
    for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(actual[0].get_as_double(i))) << "row 0 is NaN, " << i;
  }
}

// relu and clip fused into a oneDNN anchor as post-ops give what the
// interpreter gives, bit for bit, where the anchor's result is NaN: 0 and
// a_min (docs/operators.md, "Edge cases").
TEST(AotEdgeCases, ReluAndClipPostOpsAgreeWithTheInterpreterOnNaN) {
  const std::vector<double> x = {kNaN, 1, -1, 2, 0.5, -0.5, 1, 1};
  const std::vector<double> w = {1, 1, 1, 1, -1, -1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
  const std::vector<double> bias = {0.25, kInf, -kInf, 0};
  struct Case {
    std::string anchor, epilogue, algorithm;
    double at_nan;
  };
  const std::string dense = "nn.dense(reshape(%x, newshape=[2, 4]), reshape(%w, newshape=[4, 4]))";
  const std::string conv =
      "nn.conv2d(reshape(%x, newshape=[1, 2, 2, 2]), reshape(%w, newshape=[4, 2, 1, 2]), padding=[0, 0, 0, 1])";
  const std::vector<Case> cases = {
      {dense, "nn.relu(%0)", "eltwise_relu", 0},
      {dense, "clip(%0, a_min=-0.5, a_max=0.75)", "eltwise_clip", -0.5},
      {dense, "nn.relu(nn.bias_add(%0, %b, axis=1))", "eltwise_relu", 0},
      {conv, "nn.relu(%0)", "eltwise_relu", 0},
      {conv, "clip(nn.bias_add(%0, %b), a_min=-0.5, a_max=0.75)", "eltwise_clip", -0.5}};
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE(cases[k].anchor + " then " + cases[k].epilogue);
    std::string text =
        "def @main(%x: Tensor[(8), float32], %w: Tensor[(16), float32], %b: Tensor[(4), float32]) {\n"
        "  %0 = " + cases[k].anchor + ";\n  " + cases[k].epilogue + "\n}\n";
    IRModule mod = parse_module(text, "post_op.sy");
    std::map<std::string, NDArray> inputs = inputs_of(mod, {x, w, bias});
    std::vector<NDArray> expected = interpret(mod, inputs);
    IRModule anchor_only = parse_module(
        "def @main(%x: Tensor[(8), float32], %w: Tensor[(16), float32], %b: Tensor[(4), float32]) {\n  " +
            cases[k].anchor + "\n}\n",
        "anchor.sy");
    NDArray anchor = interpret(anchor_only, inputs).at(0);
    std::string dir = built(mod, "post_op_" + std::to_string(k));
    const std::vector<PrimitiveSpec> primitives = Artifact::load(dir)->manifest().primitives;
    ASSERT_EQ(primitives.size(), 1u) << "one oneDNN primitive";
    const std::vector<PrimitivePostOp>& post_ops = primitives[0].post_ops;
    EXPECT_TRUE(std::any_of(post_ops.begin(), post_ops.end(),
                            [&](const PrimitivePostOp& p) { return p.algorithm == cases[k].algorithm; }))
        << "oneDNN computes the " << cases[k].algorithm;
    std::vector<NDArray> actual = run_artifact(dir, inputs);
    EXPECT_EQ(compare_bits(actual.at(0), expected.at(0)), "");
    int64_t nans = 0;
    for (int64_t i = 0; i < anchor.numel(); ++i) {
      if (!std::isnan(anchor.get_as_double(i))) continue;
      ++nans;
      EXPECT_EQ(actual[0].get_as_double(i), cases[k].at_nan) << "where the anchor gave NaN, element " << i;
    }
    EXPECT_GE(nans, 2) << "the anchor's result has NaNs";
  }
}

// The swish and hardswish post-ops (a convolution's self-gated activation)
// give what the interpreter gives where its result is NaN or infinite: NaN
// stays NaN, +inf stays +inf, and -inf times its zero gate is NaN.
TEST(AotEdgeCases, SwishAndHardswishPostOpsAgreeWithTheInterpreterOnNaNAndInfinities) {
  const std::vector<double> x = {kNaN, kInf, -kInf, -0.0, 2.5, -2.5, 0.25, 7};
  const std::vector<double> w = {1};  // a 1x1 convolution of one channel: the identity
  for (const std::string activation :
       {"multiply(%0, sigmoid(%0))", "multiply(%0, clip(add(multiply(%0, 0.16666667f), 0.5f), a_min=0.0, a_max=1.0))"}) {
    SCOPED_TRACE(activation);
    IRModule mod = parse_module(
        "def @main(%x: Tensor[(8), float32], %w: Tensor[(1), float32]) {\n"
        "  %0 = nn.conv2d(reshape(%x, newshape=[1, 1, 2, 4]), reshape(%w, newshape=[1, 1, 1, 1]));\n  " +
            activation + "\n}\n",
        "gated.sy");
    std::map<std::string, NDArray> inputs = inputs_of(mod, {x, w});
    std::vector<NDArray> expected = interpret(mod, inputs);
    std::string dir = built(mod, "gated_" + std::to_string(activation.size()));
    const std::vector<PrimitiveSpec> primitives = Artifact::load(dir)->manifest().primitives;
    ASSERT_EQ(primitives.size(), 1u);
    ASSERT_EQ(primitives[0].post_ops.size(), 1u) << "the activation is the convolution's post-op";
    NDArray actual = run_artifact(dir, inputs).at(0);
    EXPECT_EQ(compare_arrays(actual, expected.at(0), 1e-6, 1e-7), "");
    EXPECT_TRUE(std::isnan(actual.get_as_double(0)) && std::isnan(actual.get_as_double(2)));
    EXPECT_EQ(actual.get_as_double(1), kInf);
  }
}

}  // namespace aot_edge_cases_test
}  // namespace switchyard::testing
