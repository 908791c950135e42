// render_cpu_scalar: the C++ forms generated kernels rely on for speed
// (conditional expressions, not std::min/max; the sy_ vector helpers) and
// the helpers each form records.
#include <gtest/gtest.h>

#include "codegen/scalar_spelling.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {
namespace cpu_scalar_test {

std::string render(const std::string& op, std::vector<DType> args, DType result, std::vector<std::string> values,
                   std::set<CpuHelper>* helpers = nullptr, Attrs attrs = Attrs()) {
  std::set<CpuHelper> used;
  Op handle = op_get(op);
  return render_cpu_scalar({as<OpNode>(handle), attrs, std::move(args), result, Span()}, values,
                           helpers ? *helpers : used);
}

TEST(CpuScalar, FloatArithmeticRoundsHalfPrecisionAfterEveryOperator) {
  EXPECT_EQ(render("add", {DType::kFloat32, DType::kFloat32}, DType::kFloat32, {"a", "b"}), "a + b");
  std::set<CpuHelper> helpers;
  std::string half = render("multiply", {DType::kFloat16, DType::kFloat16}, DType::kFloat16, {"a", "b"}, &helpers);
  EXPECT_NE(half.find("a * b"), std::string::npos) << half;
  EXPECT_NE(half, "a * b");
  EXPECT_TRUE(helpers.count(CpuHelper::kHalf));
}

TEST(CpuScalar, IntegersWrapThroughUnsignedArithmetic) {
  EXPECT_EQ(render("add", {DType::kInt32, DType::kInt32}, DType::kInt32, {"a", "b"}),
            "int32_t(uint64_t(a) + uint64_t(b))");
  std::set<CpuHelper> helpers;
  EXPECT_EQ(render("divide", {DType::kInt64, DType::kInt64}, DType::kInt64, {"a", "b"}, &helpers),
            "int64_t(sy_divide_int(a, b, buffers.faults))");
  EXPECT_TRUE(helpers.count(CpuHelper::kIntegerDivide));
  // A zero divisor is a fault, so the kernel keeps a fault word.
  EXPECT_TRUE(helpers_may_fault(helpers));
  EXPECT_FALSE(helpers_may_fault({CpuHelper::kHalf, CpuHelper::kFloatToInt, CpuHelper::kFloatMath}));
}

TEST(CpuScalar, MaximumIsAConditionalThatPropagatesNaN) {
  EXPECT_EQ(render("maximum", {DType::kFloat32, DType::kFloat32}, DType::kFloat32, {"a", "b"}),
            "(a != a || a > b) ? a : b");
  EXPECT_EQ(render("minimum", {DType::kInt8, DType::kInt8}, DType::kInt8, {"a", "b"}), "a < b ? a : b");
}

TEST(CpuScalar, TranscendentalsUseTheVectorHelpers) {
  std::set<CpuHelper> helpers;
  EXPECT_EQ(render("exp", {DType::kFloat32}, DType::kFloat32, {"x"}, &helpers), "sy_exp(x)");
  EXPECT_TRUE(helpers.count(CpuHelper::kFloatMath));
}

TEST(CpuScalar, CompositeRowsRenderFromTheirMeaning) {
  std::set<CpuHelper> helpers;
  EXPECT_EQ(render("sigmoid", {DType::kFloat32}, DType::kFloat32, {"x"}, &helpers), "1.0f / (1.0f + sy_exp(-x))");
  EXPECT_TRUE(helpers.count(CpuHelper::kFloatMath));
  EXPECT_EQ(render("rsqrt", {DType::kFloat32}, DType::kFloat32, {"x"}), "1.0f / sy_sqrt(x)");
  // Integer bounds stay int64_t, so a bound beyond int8 clamps before the conversion back.
  Attrs bounds = normalize_attrs(*find_op_def("clip"), {{"a_min", 0.5}, {"a_max", 1000.0}});
  // clip's nested select is a call of sy_select, both branches computed first
  // (vector blends, where GCC turns nested `?:` into chains of masked compares).
  EXPECT_EQ(render("clip", {DType::kInt8}, DType::kInt8, {"x"}, nullptr, bounds),
            "int8_t(sy_select<int64_t>(x > int64_t(1000), int64_t(1000), x > int64_t(0) ? x : int64_t(0)))");
  // relu and clip ignore NaN, as oneDNN's post-ops: a NaN fails every comparison.
  EXPECT_EQ(render("clip", {DType::kFloat32}, DType::kFloat32, {"x"}, nullptr, bounds),
            "sy_select<float>(x > 1000.0f, 1000.0f, x > 0.5f ? x : 0.5f)");
  EXPECT_EQ(render("nn.relu", {DType::kFloat32}, DType::kFloat32, {"x"}), "x > 0.0f ? x : 0.0f");
}

TEST(CpuScalar, RoundingPrimitivesVectorise) {
  // sy_floor, sy_ceil and sy_nearbyint (builtins) become single instructions under -O3 -march=native.
  EXPECT_EQ(render("floor", {DType::kFloat32}, DType::kFloat32, {"x"}), "sy_floor(x)");
  EXPECT_EQ(render("ceil", {DType::kFloat32}, DType::kFloat32, {"x"}), "sy_ceil(x)");
  EXPECT_EQ(render("round", {DType::kFloat32}, DType::kFloat32, {"x"}), "sy_nearbyint(x)");
}

TEST(CpuScalar, OperandsAreParenthesized) {
  EXPECT_EQ(render("subtract", {DType::kFloat32, DType::kFloat32}, DType::kFloat32, {"a + b", "c"}),
            "(a + b) - c");
}

TEST(CpuScalar, FloatOnlyOperatorsRejectIntegers) {
  try {
    render("exp", {DType::kInt32}, DType::kInt32, {"x"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'exp' needs a floating-point input, got int32"), std::string::npos)
        << e.what();
  }
}

}  // namespace cpu_scalar_test
}  // namespace switchyard
