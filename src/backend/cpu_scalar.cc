// Element-wise operators rendered as C++ expressions. Semantics follow the
// reference kernels (interp/kernels_elementwise.cc): float16/bfloat16
// compute in float and round after every operator; integers wrap; NaN
// propagates through maximum/minimum.
#include "backend/cpu_scalar.h"

#include <cmath>
#include <map>

#include "backend/cpu_index.h"
#include "support/error.h"

namespace switchyard {

std::string render_cpu_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                              std::set<CpuHelper>& helpers) {
  const std::string& op = call.op->name;
  DType in = call.arg_dtypes.at(0);
  DType out = call.result_dtype;
  bool is_float = dtype_is_float(in);
  std::string type = compute_type(out);
  std::vector<std::string> v;
  for (const std::string& value : values) v.push_back(parenthesize(value));
  auto wrap = [&](const std::string& e) { return type + "(" + e + ")"; };
  auto wide = [](const std::string& e) { return "uint64_t(" + e + ")"; };
  auto rounded = [&](const std::string& e) { return round_to_dtype(out, e, &helpers); };
  auto float_only = [&](const std::string& e) {
    if (!is_float)
      throw Error(ErrorKind::kBackend, "'" + op + "' needs a floating-point input, got " + dtype_name(in),
                  call.span);
    return rounded(e);
  };
  static const std::map<std::string, std::string> arithmetic = {
      {"add", "+"}, {"nn.bias_add", "+"}, {"subtract", "-"}, {"multiply", "*"}};
  if (auto it = arithmetic.find(op); it != arithmetic.end()) {
    const std::string& symbol = it->second;
    return is_float ? rounded(v[0] + " " + symbol + " " + v[1]) : wrap(wide(v[0]) + " " + symbol + " " + wide(v[1]));
  }
  static const std::map<std::string, std::string> comparisons = {{"equal", "=="}, {"less", "<"}, {"greater", ">"}};
  if (auto it = comparisons.find(op); it != comparisons.end()) return v[0] + " " + it->second + " " + v[1];
  if (op == "divide") {
    if (is_float) return rounded(v[0] + " / " + v[1]);
    helpers.insert(CpuHelper::kIntegerDivide);
    return wrap("sy_divide_int(" + v[0] + ", " + v[1] + ")");
  }
  if (op == "power") {
    if (is_float) return rounded("std::pow(" + v[0] + ", " + v[1] + ")");
    helpers.insert(CpuHelper::kIntegerPower);
    return wrap("sy_power_int(" + v[0] + ", " + v[1] + ")");
  }
  if (op == "maximum" || op == "minimum") {
    std::string symbol = op == "maximum" ? " > " : " < ";
    if (is_float) return "(" + v[0] + " != " + v[0] + " || " + v[0] + symbol + v[1] + ") ? " + v[0] + " : " + v[1];
    return v[0] + symbol + v[1] + " ? " + v[0] + " : " + v[1];
  }
  if (op == "negative") return is_float ? "-" + v[0] : wrap("0ull - " + wide(v[0]));
  if (op == "abs")
    return is_float ? "std::fabs(" + v[0] + ")" : v[0] + " < 0 ? " + wrap("0ull - " + wide(v[0])) + " : " + v[0];
  if (op == "nn.relu")
    return is_float ? v[0] + " < 0.0f ? 0.0f : " + v[0] : v[0] + " < 0 ? " + wrap("0") + " : " + v[0];
  // exp, log, tanh, sigmoid and erf use the vectorisable helpers of cpu_math.cc.
  static const std::map<std::string, std::string> unary = {{"exp", "sy_exp"},     {"log", "sy_log"},
                                                           {"tanh", "sy_tanh"},   {"sigmoid", "sy_sigmoid"},
                                                           {"sqrt", "std::sqrt"}, {"erf", "sy_erf"}};
  if (auto it = unary.find(op); it != unary.end()) {
    if (it->second.rfind("sy_", 0) == 0) helpers.insert(CpuHelper::kFloatMath);
    return float_only(it->second + "(" + v[0] + ")");
  }
  if (op == "rsqrt") return float_only("1.0f / std::sqrt(" + v[0] + ")");
  if (op == "where") return v[0] + " ? " + v[1] + " : " + v[2];
  if (op == "clip") {
    double low = call.attrs->get_float("a_min"), high = call.attrs->get_float("a_max");
    // Conditional expressions rather than std::min/max, which take their
    // operands by reference and keep `omp simd` loops from vectorising.
    if (is_float) {
      std::string lo = literal(in, low), hi = literal(in, high);
      return rounded(v[0] + " < " + lo + " ? " + lo + " : (" + v[0] + " > " + hi + " ? " + hi + " : " + v[0] + ")");
    }
    auto bound = [](double b) {
      if (std::isnan(b)) return std::string("0");
      if (b >= 9223372036854775807.0) return std::string("INT64_MAX");
      if (b <= -9223372036854775808.0) return std::string("INT64_MIN");
      return "int64_t(" + std::to_string(int64_t(b)) + ")";
    };
    std::string lo = bound(low), hi = bound(high), x = "int64_t(" + v[0] + ")";
    return wrap(x + " < " + lo + " ? " + lo + " : (" + x + " > " + hi + " ? " + hi + " : " + x + ")");
  }
  if (op == "cast") {
    if (out == DType::kBool) return v[0] + (is_float ? " != 0.0f" : " != 0");
    if (dtype_is_float(out)) return rounded(is_float ? v[0] : "float(" + v[0] + ")");
    if (!is_float) return wrap(v[0]);
    helpers.insert(CpuHelper::kFloatToInt);
    return wrap("sy_float_to_int64(" + v[0] + ")");
  }
  throw Error(ErrorKind::kBackend, "no CPU kernel for operator '" + op + "'", call.span);
}

}  // namespace switchyard
