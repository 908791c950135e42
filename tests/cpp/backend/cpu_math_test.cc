// The vectorisable math of generated kernels (kernel_math.cc: sy_exp, sy_erf,
// sy_tanh; sigmoid is built on sy_exp) and the float sums of softmax and
// layer_norm, compiled as real kernels and compared with the interpreter on dense grids and edge
// values: 1e-6 relative everywhere (subnormal results: within their spacing),
// a few ulp near zero, and every special value (NaN, infinities, signed
// zeros, overflow) exactly as the interpreter gives it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/evaluate.h"
#include "kernel_cases.h"

namespace switchyard::testing {
namespace cpu_math_test {

constexpr int64_t kGrid = 1 << 20;
constexpr float kInf = std::numeric_limits<float>::infinity();

// Values where the approximations switch method, round to 0, 1 or infinity,
// or leave the normal range, with their float neighbours; and special values.
std::vector<float> edge_values() {
  std::vector<float> edges = {0.0f,      -0.0f,       kInf,        -kInf,      std::nanf(""), -std::nanf(""),
                              1e-45f,    -1e-45f,     1e-40f,      -1e-40f,    1.17549435e-38f, 1e-30f,
                              1e-10f,    -1e-7f,      0.625f,      -0.625f,    1.0f,        -1.0f,
                              3.9f,      4.0f,        -4.0f,       9.0f,       44.0f,       -44.0f,
                              88.7228317f, 88.7228394f, 88.8f,     89.0f,      -87.33654f,  -88.7f,
                              -103.2789f, -103.9721f, -104.0f,     -105.0f,    1e30f,       -1e30f,
                              3.4e38f,   -3.4e38f,    0.34657359f, -0.34657359f, 0.69314718f, 20.0f};
  std::vector<float> out;
  for (float e : edges) {
    out.push_back(e);
    if (std::isfinite(e)) {
      out.push_back(std::nextafter(e, kInf));
      out.push_back(std::nextafter(e, -kInf));
    }
  }
  return out;
}

// kGrid inputs: a uniform grid over [-lo, hi], a logarithmic one over
// +-[1e-38, 1e3] (near zero, where relative error is hardest), then the edges.
NDArray grid(float lo, float hi) {
  NDArray x(DType::kFloat32, {kGrid});
  float* v = x.as<float>();
  std::vector<float> edges = edge_values();
  int64_t uniform = kGrid / 2, logarithmic = kGrid - uniform - int64_t(edges.size());
  for (int64_t i = 0; i < uniform; ++i) v[i] = lo + (hi - lo) * float(double(i) / double(uniform - 1));
  for (int64_t i = 0; i < logarithmic; ++i) {
    double t = double(i / 2) / double(logarithmic / 2);
    float magnitude = float(std::pow(10.0, -38.0 + 41.0 * t));
    v[uniform + i] = i % 2 ? -magnitude : magnitude;
  }
  for (size_t i = 0; i < edges.size(); ++i) v[uniform + logarithmic + int64_t(i)] = edges[i];
  return x;
}

// The first element where `actual` and the interpreter's `expected` differ by
// more than 1e-6 relative (or, for results below the normal range, by more
// than two of their steps), or whose special value or zero sign differs; and
// among elements with |x| < 1e-3, more than `near_zero_ulps` ulp. "" if none.
std::string compare(const NDArray& x, const NDArray& actual, const NDArray& expected, float near_zero_ulps) {
  const float* in = x.as<float>();
  const float* a = actual.as<float>();
  const float* e = expected.as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool same = std::isnan(a[i]) ? std::isnan(e[i]) : (a[i] == e[i] && std::signbit(a[i]) == std::signbit(e[i]));
    if (same) continue;
    // NaN, infinities and zeros of the other sign must come out exactly.
    bool special = std::isnan(a[i]) || std::isnan(e[i]) || std::isinf(a[i]) || std::isinf(e[i]) ||
                   (a[i] == 0.0f && e[i] == 0.0f);
    double error = std::fabs(double(a[i]) - double(e[i]));
    double ulp = std::fabs(double(std::nextafter(e[i], kInf)) - double(e[i]));
    bool close = std::fabs(e[i]) < 1.17549435e-38f ? error <= 2 * 1.4e-45 : error <= 1e-6 * std::fabs(double(e[i]));
    if (close && std::fabs(in[i]) < 1e-3f) close = error <= near_zero_ulps * ulp;
    if (special || !close) {
      char message[160];
      std::snprintf(message, sizeof message, "x = %.9g: got %.9g, interpreter %.9g (%.3g ulp)", double(in[i]),
                    double(a[i]), double(e[i]), error / ulp);
      return message;
    }
  }
  return "";
}

struct MathCase {
  std::string op;
  float lo, hi;
  float near_zero_ulps;  // unused when the result near zero is ~1 (exp, sigmoid)
};

const std::vector<MathCase>& math_cases() {
  static const std::vector<MathCase> cases = {
      {"exp", -110.0f, 90.0f, 2}, {"erf", -6.0f, 6.0f, 3}, {"tanh", -12.0f, 12.0f, 3}, {"sigmoid", -110.0f, 110.0f, 2}};
  return cases;
}

const CaseBatch& math_kernels() {
  static const CaseBatch batch = [] {
    std::vector<KernelCase> specs;
    for (const MathCase& c : math_cases())
      specs.push_back({c.op, "def @main(%x: Tensor[(" + std::to_string(kGrid) + "), float32]) {\n  " + c.op +
                                 "(%x)\n}\n"});
    return build_cases(specs, "cpu_math");
  }();
  return batch;
}

class CpuMath : public ::testing::TestWithParam<size_t> {};

TEST_P(CpuMath, MatchesTheInterpreterOnADenseGridAndEdgeValues) {
  const MathCase& c = math_cases()[GetParam()];
  PreparedCase p = math_kernels().cases[GetParam()];
  NDArray x = grid(c.lo, c.hi);
  p.inputs["x"] = x;
  NDArray expected = flatten_value(evaluate(p.module, p.inputs))[0];
  NDArray actual = run_kernel(*math_kernels().library, p.source, {x}, TestServices(1))[0];
  EXPECT_EQ(compare(x, actual, expected, c.near_zero_ulps), "") << c.op;
}

INSTANTIATE_TEST_SUITE_P(Functions, CpuMath, ::testing::Range<size_t>(0, 4), [](const auto& info) {
  return math_cases()[info.param].op;
});

TEST(CpuMath, TheLoopsCallNoLibraryFunction) {
  for (const PreparedCase& p : math_kernels().cases) {
    EXPECT_EQ(p.source.code.find("std::exp("), std::string::npos) << p.source.code;
    EXPECT_EQ(p.source.code.find("std::erf("), std::string::npos) << p.source.code;
    EXPECT_EQ(p.source.code.find("std::tanh("), std::string::npos) << p.source.code;
  }
}

// Softmax and layer_norm rows longer than one summation block (1024), rows
// along a strided axis, and rows holding -inf, +inf and NaN, against the
// interpreter's double sums.
TEST(CpuMath, SoftmaxAndLayerNormSumLongRowsAccurately) {
  std::vector<KernelCase> specs = {
      {"softmax_long", "def @main(%x: Tensor[(3, 5000), float32]) {\n  nn.softmax(%x)\n}\n", -20, 20},
      {"softmax_strided", "def @main(%x: Tensor[(1100, 3), float32]) {\n  nn.softmax(%x, axis=0)\n}\n", -20, 20},
      {"softmax_scaled",
       "def @main(%x: Tensor[(4, 2048), float32]) {\n  %0 = nn.softmax(%x);\n  multiply(%0, 2048f)\n}\n", -3, 3},
      {"layer_norm_long",
       "def @main(%x: Tensor[(2, 4099), float32], %g: Tensor[(4099), float32], %b: Tensor[(4099), float32]) {\n"
       "  nn.layer_norm(%x, %g, %b)\n}\n",
       -3, 5},
  };
  for (KernelCase& s : specs) s.tolerance = 1e-5;
  CaseBatch batch = build_cases(specs, "cpu_math_rows");
  for (PreparedCase& p : batch.cases) {
    if (p.spec.name == "softmax_long") {
      float* x = p.inputs.at("x").as<float>();  // kernel_inputs share this array
      x[0] = -kInf;                              // row 0: one element drops out
      x[5000] = kInf;                            // row 1: inf - inf, NaN as in the interpreter
      x[10000 + 7] = std::nanf("");              // row 2: NaN spreads over the row
    }
    expect_matches_interpreter(batch, p, TestServices(1));
  }
}

}  // namespace cpu_math_test
}  // namespace switchyard::testing
