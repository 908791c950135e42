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
namespace {

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

// Runs `text` both ways on `values`; returns the interpreter's outputs.
std::vector<NDArray> expect_same(const std::string& name, const std::string& text,
                                 const std::vector<std::vector<double>>& values) {
  IRModule mod = parse_module(text, name + ".sy");
  std::map<std::string, NDArray> inputs = inputs_of(mod, values);
  std::vector<NDArray> expected = interpret(mod, inputs);
  std::vector<NDArray> actual = run_artifact(built(mod, name), inputs);
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

}  // namespace
}  // namespace switchyard::testing
