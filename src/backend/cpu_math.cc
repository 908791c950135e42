// Vectorisable float math for generated kernels: exp, log, tanh and
// sigmoid without branches or library calls, so loops that use them still
// vectorise (libm's scalar calls would stop that; so would std::min/max on
// temporaries inside `omp simd` loops, hence the conditional expressions). Cephes' polynomials,
// accurate to a few ulp; special values (NaN, infinities, zero, subnormal
// inputs) follow the C library.
#include "backend/cpu_code.h"

namespace switchyard {

const char* cpu_math_definitions() {
  return R"(// e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by polynomial, 2^n from bits
// (as two factors, so n = 128 and large negative n stay representable).
inline float sy_pow2(int32_t n) {
  uint32_t bits = uint32_t(n + 127) << 23;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}
inline float sy_exp(float x) {
  const float clamped = x != x ? 0.0f : (x < -103.0f ? -103.0f : (x > 88.7228394f ? 88.7228394f : x));
  // n = round(x / ln 2) by adding and subtracting 1.5 * 2^23: neither floor
  // nor a float-to-int conversion here, which would keep the loop scalar.
  // (Needs no -ffast-math, which would fold the two additions away.)
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t half = int32_t(n) / 2;
  const float y = p * sy_pow2(half) * sy_pow2(int32_t(n) - half);
  return x != x ? x : (x > 88.7228394f ? INFINITY : (x < -103.0f ? 0.0f : y));
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
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  float y = p * m * z + e * -2.12194440e-4f - 0.5f * z;
  y = m + y + e * 0.693359375f;
  return x != x ? x : (x < 0.0f ? NAN : (x == 0.0f ? -INFINITY : (x == INFINITY ? INFINITY : y)));
}
// tanh: a polynomial near zero, 1 - 2 / (e^2|x| + 1) elsewhere.
inline float sy_tanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float large = std::copysign(1.0f - 2.0f / (sy_exp(a + a) + 1.0f), x);
  return a < 0.625f ? small : large;
}
inline float sy_sigmoid(float x) { return 1.0f / (1.0f + sy_exp(-x)); }
)";
}

}  // namespace switchyard
