// Element-wise operators rendered as C++ expressions from their scalar
// meaning (OpDef::scalar, op/elementwise_ops.cc), the same meaning the
// interpreter evaluates. Each primitive keeps the form that lets `omp simd`
// loops vectorise: conditional expressions rather than std::min/max (which
// take their operands by reference), the sy_ helpers of kernel_math.cc rather
// than libm calls, integer arithmetic through uint64_t so it wraps.
#include "codegen/scalar_spelling.h"

#include <cmath>

#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

// C++ precedence levels that matter here (smaller binds tighter).
enum Precedence : int {
  kAtom = 0,  // a name, a literal, a call, a parenthesized expression
  kPrefix = 3,
  kMultiplicative = 5,
  kAdditive = 6,
  kRelational = 9,
  kEquality = 10,
  kConditional = 16,
};

// A rendered sub-expression and the C++ type it has.
struct Rendered {
  std::string text;
  std::string type;
  int precedence = kAtom;
};

class Renderer {
 public:
  Renderer(const ScalarCall& call, const std::vector<std::string>& values, std::set<CpuHelper>& helpers,
           const ScalarSpelling& spelling)
      : call_(call), values_(values), helpers_(helpers), spelling_(spelling) {}

  Rendered render(const ScalarExpr& e) {
    DType dtype = scalar_dtype(e, call_.arg_dtypes, call_.result_dtype);
    std::string type = compute_type(dtype);
    bool is_float = dtype_is_float(dtype);
    auto arg = [&](size_t i) { return render(e.args[i]); };
    auto wrap = [&](const std::string& text) { return Rendered{type + "(" + text + ")", type}; };
    auto wide = [](const Rendered& r) { return "uint64_t(" + r.text + ")"; };
    auto infix = [&](const char* symbol, int precedence) {
      Rendered a = arg(0), b = arg(1);
      if (!is_float && (precedence == kAdditive || precedence == kMultiplicative))  // wraps
        return wrap(wide(a) + " " + symbol + " " + wide(b));
      return Rendered{operand(a, precedence, false) + " " + symbol + " " + operand(b, precedence, true),
                      precedence >= kRelational ? "bool" : type, precedence};
    };
    auto function = [&](const std::string& name) { return Rendered{name + "(" + arg(0).text + ")", type}; };
    auto library = [&](const char* name) {
      return function(std::string(spelling_.library_prefix) + name + spelling_.library_suffix);
    };
    auto vector_math = [&](const std::string& name) {
      if (spelling_.math_is_helper) helpers_.insert(CpuHelper::kFloatMath);
      return function(name);
    };
    switch (e.op) {
      case ScalarOp::kOperand: return {parenthesize(values_.at(size_t(e.operand))), type};
      case ScalarOp::kConstant: return leaf(literal(dtype, e.value), type);
      case ScalarOp::kAttribute: return attribute(e.attr, dtype);
      case ScalarOp::kAdd: return infix("+", kAdditive);
      case ScalarOp::kSubtract: return infix("-", kAdditive);
      case ScalarOp::kMultiply: return infix("*", kMultiplicative);
      case ScalarOp::kDivide: {
        if (is_float) return infix("/", kMultiplicative);
        helpers_.insert(CpuHelper::kIntegerDivide);
        if (dtype == DType::kUInt64)  // beyond int64's range: divides as unsigned
          return {"sy_divide_uint64(" + arg(0).text + ", " + arg(1).text + ", " + kFaultsArgument + ")", type};
        return wrap("sy_divide_int(" + arg(0).text + ", " + arg(1).text + ", " + kFaultsArgument + ")");
      }
      case ScalarOp::kPower: {
        if (is_float) return {std::string(spelling_.pow) + "(" + arg(0).text + ", " + arg(1).text + ")", type};
        helpers_.insert(CpuHelper::kIntegerPower);
        return wrap("sy_power_int(" + arg(0).text + ", " + arg(1).text + ", " + kFaultsArgument + ")");
      }
      case ScalarOp::kMaximum: return extremum(arg(0), arg(1), " > ", is_float);
      case ScalarOp::kMinimum: return extremum(arg(0), arg(1), " < ", is_float);
      case ScalarOp::kEqual: return infix("==", kEquality);
      case ScalarOp::kLess: return infix("<", kRelational);
      case ScalarOp::kGreater: return infix(">", kRelational);
      case ScalarOp::kNegate: {
        Rendered a = arg(0);
        if (!is_float) return wrap("0ull - " + wide(a));
        return {"-" + (a.precedence >= kPrefix ? "(" + a.text + ")" : a.text), type, kPrefix};
      }
      case ScalarOp::kAbs: {
        Rendered a = arg(0);
        if (is_float) return {std::string(spelling_.fabs) + "(" + a.text + ")", type};
        if (dtype_is_unsigned(dtype)) return a;
        std::string x = operand(a, kRelational, false);
        return {x + " < 0 ? " + wrap("0ull - " + wide(a)).text + " : " + x, type, kConditional};
      }
      case ScalarOp::kExp: return vector_math(spelling_.exp);
      case ScalarOp::kLog: return vector_math(spelling_.log);
      case ScalarOp::kTanh: return vector_math(spelling_.tanh);
      case ScalarOp::kErf: return vector_math(spelling_.erf);
      case ScalarOp::kSqrt: return function(spelling_.sqrt);
      case ScalarOp::kSin: return library("sin");
      case ScalarOp::kCos: return library("cos");
      case ScalarOp::kTan: return library("tan");
      case ScalarOp::kAsin: return library("asin");
      case ScalarOp::kAcos: return library("acos");
      case ScalarOp::kAtan: return library("atan");
      case ScalarOp::kSinh: return library("sinh");
      case ScalarOp::kCosh: return library("cosh");
      case ScalarOp::kAsinh: return library("asinh");
      case ScalarOp::kAcosh: return library("acosh");
      case ScalarOp::kAtanh: return library("atanh");
      case ScalarOp::kFloor: return function(spelling_.floor);
      case ScalarOp::kCeil: return function(spelling_.ceil);
      case ScalarOp::kRound: return function(spelling_.round_half_even);
      case ScalarOp::kFmod: {
        std::string name = std::string(spelling_.library_prefix) + "fmod" + spelling_.library_suffix;
        return {name + "(" + arg(0).text + ", " + arg(1).text + ")", type};
      }
      case ScalarOp::kShiftLeft:
      case ScalarOp::kShiftRight: {
        // Unsigned operands: a shift by the width or more (undefined in C++) gives 0.
        Rendered a = arg(0), b = arg(1);
        std::string shifted = wide(a) + (e.op == ScalarOp::kShiftLeft ? " << " : " >> ") + wide(b);
        return {wide(b) + " < " + std::to_string(dtype_bytes(dtype) * 8) + "u ? " + wrap(shifted).text + " : " + type +
                    "(0)",
                type, kConditional};
      }
      case ScalarOp::kSelect: {
        Rendered c = arg(0), a = arg(1), b = arg(2);
        std::string chosen_type = a.type == b.type ? a.type : "int64_t";
        // A select of a select of plain values (clip's) as a call, both
        // branches computed before it chooses: GCC makes that two compares
        // and two blends, where nested `?:` branch and its if-conversion
        // leaves a chain of masked compares (a quantize's clip loop ran
        // 1.4x slower). Plain values only, so nothing that may fault runs.
        if (spelling_.select_function && nests_plain_select(e))
          return {std::string(spelling_.select_function) + "<" + chosen_type + ">(" + c.text + ", " + a.text + ", " +
                      b.text + ")",
                  chosen_type};
        return {operand(c, kConditional, true) + " ? " + operand(a, kConditional, true) + " : " +
                    operand(b, kConditional, true),
                chosen_type, kConditional};
      }
      case ScalarOp::kCast: return cast(arg(0), scalar_dtype(e.args[0], call_.arg_dtypes, call_.result_dtype));
    }
    throw Error(ErrorKind::kBackend, std::string("no ") + spelling_.target + " rendering of a scalar primitive",
                call_.span);
  }

 private:
  static Rendered leaf(std::string text, std::string type) {
    int precedence = text[0] == '-' ? kPrefix : kAtom;
    return {std::move(text), std::move(type), precedence};
  }

  // `r` as an operand of an operator of `precedence`; `right`: its right
  // operand, which needs parentheses at equal precedence too.
  static std::string operand(const Rendered& r, int precedence, bool right) {
    bool paren = right ? r.precedence >= precedence : r.precedence > precedence;
    return paren ? "(" + r.text + ")" : r.text;
  }

  // An operand, a constant or an attribute, or a comparison or select of
  // those: safe and cheap to compute whether or not it is chosen.
  static bool plain(const ScalarExpr& e) {
    switch (e.op) {
      case ScalarOp::kOperand:
      case ScalarOp::kConstant:
      case ScalarOp::kAttribute: return true;
      case ScalarOp::kEqual:
      case ScalarOp::kLess:
      case ScalarOp::kGreater:
      case ScalarOp::kSelect:
        for (const ScalarExpr& a : e.args)
          if (!plain(a)) return false;
        return true;
      default: return false;
    }
  }

  static bool nests_plain_select(const ScalarExpr& select) {
    bool nests = select.args[1].op == ScalarOp::kSelect || select.args[2].op == ScalarOp::kSelect;
    return nests && plain(select);
  }

  // NaN propagates from the first operand (floats), as the interpreter's.
  static Rendered extremum(const Rendered& a, const Rendered& b, const char* symbol, bool is_float) {
    std::string x = operand(a, kAtom, false), y = operand(b, kAtom, false);
    std::string condition = is_float ? "(" + x + " != " + x + " || " + x + symbol + y + ")" : x + symbol + y;
    return {condition + " ? " + x + " : " + y, a.type, kConditional};
  }

  // A number attribute in `dtype`: integers truncate it, saturating, as int64_t.
  Rendered attribute(const std::string& name, DType dtype) const {
    if (!call_.attrs.defined()) throw Error(ErrorKind::kBackend, "missing attribute '" + name + "'", call_.span);
    double value = call_.attrs->get_float(name);
    if (dtype_is_float(dtype)) return leaf(literal(dtype, value), compute_type(dtype));
    if (std::isnan(value)) return {"0", "int64_t"};
    if (value >= 9223372036854775807.0) return {"INT64_MAX", "int64_t"};
    if (value <= -9223372036854775808.0) return {"INT64_MIN", "int64_t"};
    return {"int64_t(" + std::to_string(int64_t(value)) + ")", "int64_t"};
  }

  Rendered cast(const Rendered& x, DType from) {
    DType out = call_.result_dtype;
    std::string type = compute_type(out);
    bool is_float = dtype_is_float(from);
    if (out == DType::kBool) return {x.text + (is_float ? " != 0.0f" : " != 0"), "bool", kEquality};
    if (dtype_is_float(out)) return x.type == type ? x : Rendered{type + "(" + x.text + ")", type};
    if (!is_float) return {type + "(" + x.text + ")", type};
    helpers_.insert(CpuHelper::kFloatToInt);
    const char* convert = out == DType::kUInt64 ? "sy_float_to_uint64(" : "sy_float_to_int64(";
    return {type + "(" + convert + x.text + "))", type};
  }

  const ScalarCall& call_;
  const std::vector<std::string>& values_;
  std::set<CpuHelper>& helpers_;
  const ScalarSpelling& spelling_;
};

}  // namespace

// std::nearbyint and rintf round halves to even in the default rounding mode.
const ScalarSpelling kCpuScalarSpelling = {"CPU",     "sy_exp",   "sy_log",  "sy_tanh",      "sy_erf", true,
                                           "sy_sqrt", "sy_floor", "sy_ceil", "sy_nearbyint", "sy_pow", "sy_fabs",
                                           "sy_",     "",         nullptr,   "__builtin_fmaf", "sy_select"};
namespace {
const ScalarSpelling kCudaDoubleSpelling = {"CUDA", "exp",   "log",  "tanh", "erf", false,
                                            "sqrt", "floor", "ceil", "rint", "pow", "fabs", "", ""};
}  // namespace
const ScalarSpelling kCudaScalarSpelling = {"CUDA",  "expf",   "logf",  "tanhf", "erff", false, "sqrtf",
                                            "floorf", "ceilf", "rintf", "powf",  "fabsf", "",    "f",
                                            &kCudaDoubleSpelling};

std::string render_cpu_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                              std::set<CpuHelper>& helpers) {
  return render_scalar(call, values, helpers, kCpuScalarSpelling);
}

std::string render_scalar(const ScalarCall& call, const std::vector<std::string>& values,
                          std::set<CpuHelper>& helpers, const ScalarSpelling& spelling) {
  const std::string& op = call.op->name;
  if (!call.op->def || !call.op->def->scalar)
    throw Error(ErrorKind::kBackend, std::string("no ") + spelling.target + " kernel for operator '" + op + "'",
                call.span);
  const ScalarMeaning& meaning = *call.op->def->scalar;
  DType in = call.arg_dtypes.at(meaning.first_value);
  if (meaning.inputs == ScalarInputs::kFloat && !dtype_is_float(in))
    throw Error(ErrorKind::kBackend, "'" + op + "' needs a floating-point input, got " + dtype_name(in), call.span);
  Rendered result = Renderer(call, values, helpers, spelling).render(meaning.expr);
  DType out = call.result_dtype;
  // Narrow floats round once, at the operator's result; integers convert
  // back where an int64_t bound widened them.
  if (dtype_is_float(out) && !scalar_is_exact(meaning.expr)) return round_to_dtype(out, result.text, &helpers);
  if (!dtype_is_float(out) && result.type != compute_type(out)) return compute_type(out) + "(" + result.text + ")";
  return result.text;
}

}  // namespace switchyard
