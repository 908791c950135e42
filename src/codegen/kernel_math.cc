// Vectorisable float math for generated kernels: the exp, log, tanh and erf
// primitives of element-wise operators (op/elementwise_ops.cc) without
// library calls, so the `omp simd` loops that use them still vectorise
// (libm's scalar calls would stop that; so would std::min/max on
// temporaries, hence the conditional expressions, and floating-point
// conditions under -ftrapping-math, hence -fno-trapping-math in
// Toolchain::cpu_flags). Results are within a few ulp of the C library's
// (the interpreter's), 1e-6 relative at worst, and every special value (NaN,
// infinities, signed zero, overflow, subnormal results) comes out as the C
// library's does; tests/cpp/backend/cpu_math_test.cc checks both on dense
// grids. The exp, tanh and erf polynomials are minimax fits of our own
// (Lawson's reweighted least squares on the stated intervals and weights);
// sy_log's is Cephes'.
#include "codegen/kernel_code.h"

namespace switchyard {

const char* cpu_math_definitions() {
  return R"(// 2^n for n in [-126, 127], from its exponent bits.
inline float sy_pow2(int32_t n) {
  const uint32_t bits = uint32_t(n + 127) << 23;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}
// e^x = 2^n e^r with n = round(x / ln 2) and |r| <= ln 2 / 2; e^r is
// 1 + r + r^2 P(r), P a degree-4 minimax fit for relative error (3.3e-9 before
// rounding). x is first clamped to [-104, 88.7228394]: below, e^x rounds to
// 0; above, to infinity; the clamp also keeps NaN away from the float-to-int
// conversion, and NaN is put back at the end.
inline float sy_exp(float x) {
  const float c = x < -104.0f ? -104.0f : (x < 88.7228394f ? x : 88.7228394f);
  // Rounding by adding and subtracting 1.5 * 2^23, not floor or lrint, which
  // keep the loop scalar (needs no -ffast-math, which would fold it away).
  const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  // ln 2 in two parts (Cody and Waite): n * 0.693359375 is exact for |n| <= 150.
  const float r = (c - n * 0.693359375f) - n * -2.12194440054690583e-4f;
  float p = 1.381314476e-03f;
  p = __builtin_fmaf(p, r, 8.369418792e-03f);
  p = __builtin_fmaf(p, r, 4.166845605e-02f);
  p = __builtin_fmaf(p, r, 1.666651517e-01f);
  p = __builtin_fmaf(p, r, 4.999999404e-01f);
  const float er = 1.0f + (r + r * r * p);
  // 2^n as two factors, each a normal float for n in [-150, 128]; the last
  // product rounds once, into the subnormals when e^x is below 2^-126.
  const int32_t ni = int32_t(n);
  const int32_t half = ni >> 1;
  const float y = er * sy_pow2(half) * sy_pow2(ni - half);
  return x != x ? x : y;
}
// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m by polynomial.
inline float sy_log(float x) {
  const bool tiny = x < 1.17549435e-38f;
  const float scaled = tiny ? x * 8388608.0f : x;
  uint32_t bits;
  std::memcpy(&bits, &scaled, 4);
  float e = float(int32_t((bits >> 23) & 0xff) - 126 - (tiny ? 23 : 0));
  bits = (bits & 0x007fffffu) | 0x3f000000u;
  float m;
  std::memcpy(&m, &bits, 4);
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.0f : e;
  m = low ? m + m - 1.0f : m - 1.0f;
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = __builtin_fmaf(p, m, -1.1514610310e-1f);
  p = __builtin_fmaf(p, m, 1.1676998740e-1f);
  p = __builtin_fmaf(p, m, -1.2420140846e-1f);
  p = __builtin_fmaf(p, m, 1.4249322787e-1f);
  p = __builtin_fmaf(p, m, -1.6668057665e-1f);
  p = __builtin_fmaf(p, m, 2.0000714765e-1f);
  p = __builtin_fmaf(p, m, -2.4999993993e-1f);
  p = __builtin_fmaf(p, m, 3.3333331174e-1f);
  float y = p * m * z + e * -2.12194440e-4f - 0.5f * z;
  y = m + y + e * 0.693359375f;
  return x != x ? x : (x < 0.0f ? NAN : (x == 0.0f ? -INFINITY : (x == INFINITY ? INFINITY : y)));
}
// tanh: x + x^3 P(x^2) below 0.625 (P a degree-4 minimax fit for relative
// error, 4.4e-9), 1 - 2 / (e^2|x| + 1) above, which is 1 once e^2|x| overflows.
inline float sy_tanh(float x) {
  const float a = sy_fabs(x);
  const float t = x * x;
  float p = -5.704986863e-03f;
  p = __builtin_fmaf(p, t, 2.063908614e-02f);
  p = __builtin_fmaf(p, t, -5.373971537e-02f);
  p = __builtin_fmaf(p, t, 1.333144158e-01f);
  p = __builtin_fmaf(p, t, -3.333328068e-01f);
  const float near = a + a * t * p;
  const float far = 1.0f - 2.0f / (sy_exp(a + a) + 1.0f);
  return sy_copysign(a < 0.625f ? near : far, x);  // NaN: far, which is NaN; -0 stays -0
}
// erf: below 1, x Q(x^2) (Q a degree-6 minimax fit for relative error,
// 1.2e-9), exact to the last bits near 0 where erf(x) ~ 2x / sqrt(pi).
// From 1 to 4, 1 - erfc(|x|) with erfc(a) = e^(S(a) - a^2): S = ln erfc + a^2
// is smooth and small there, a degree-6 fit in a - 2.5 whose error is
// weighted by erfc / erf, the error it makes in erf. Beyond 4 (and at
// infinity) erfc < 2e-8 and 1 - erfc rounds to 1.
inline float sy_erf(float x) {
  const float t = x * x;
  float q = 7.853861462e-05f;
  q = __builtin_fmaf(q, t, -8.010193706e-04f);
  q = __builtin_fmaf(q, t, 5.188327748e-03f);
  q = __builtin_fmaf(q, t, -2.685381286e-02f);
  q = __builtin_fmaf(q, t, 1.128358543e-01f);
  q = __builtin_fmaf(q, t, -3.761262596e-01f);
  q = q * t + 1.12837916709551257f;  // 2 / sqrt(pi)
  const float near = x * q;
  const float a = sy_fabs(x);
  const float b = a < 4.0f ? a : 4.0f;
  const float u = b - 2.5f;
  float s = 1.863792131e-04f;
  s = __builtin_fmaf(s, u, -1.519703364e-04f);
  s = __builtin_fmaf(s, u, 2.465384547e-03f);
  s = __builtin_fmaf(s, u, -1.071126107e-02f);
  s = __builtin_fmaf(s, u, 5.611685663e-02f);
  s = __builtin_fmaf(s, u, -3.526939452e-01f);
  s = __builtin_fmaf(s, u, -1.556817889e+00f);
  const float far = sy_copysign(1.0f - sy_exp(s - b * b), x);
  return a >= 1.0f ? far : near;  // NaN: near, which is NaN
}
// float64's: the C library's double functions, as the reference's. Beside
// the float ones, in the kernel's namespace, so that a call sees both.
inline double sy_exp(double x) { return __builtin_exp(x); }
inline double sy_log(double x) { return __builtin_log(x); }
inline double sy_tanh(double x) { return __builtin_tanh(x); }
inline double sy_erf(double x) { return __builtin_erf(x); }
)";
}

}  // namespace switchyard
