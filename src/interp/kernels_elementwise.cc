// Reference kernels of the element-wise and broadcasting operators, derived
// from each operator's scalar meaning (OpDef::scalar, op/elementwise_ops.cc).
// A call lowers the meaning once into closures for the operands' dtypes, then
// runs them per element.
//
// Floating-point math is done in float (float16 and bfloat16 through float,
// rounded back on store); integer math in int64 wrapping to the dtype's width
// as NumPy does; integer division truncates toward zero (C and TVM's Div) and
// division by zero is an error.
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "interp/kernel_groups.h"
#include "interp/kernel_util.h"
#include "op/registry.h"

namespace switchyard {

namespace {

constexpr size_t kMaxOperands = 3;

// One element's operands in their compute types: f for floating-point
// operands, i for integer and bool ones.
struct Element {
  std::array<float, kMaxOperands> f{};
  std::array<int64_t, kMaxOperands> i{};
};
using FloatFn = std::function<float(const Element&)>;
using IntFn = std::function<int64_t(const Element&)>;

int64_t int_divide(int64_t a, int64_t b) {
  if (b == 0) throw Error(ErrorKind::kRuntime, "integer division by zero");
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 overflows; wrap as the narrower types do
  return a / b;
}

int64_t int_power(int64_t base, int64_t exponent) {
  if (exponent < 0) throw Error(ErrorKind::kRuntime, "integer power with a negative exponent");
  int64_t result = 1;
  while (exponent > 0) {  // square and multiply, wrapping
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

// NaN propagates through maximum and minimum, as in NumPy.
float float_maximum(float a, float b) { return std::isnan(a) || a > b ? a : b; }
float float_minimum(float a, float b) { return std::isnan(a) || a < b ? a : b; }

// Lowers a scalar expression for one call's operand dtypes and attributes.
class Lowering {
 public:
  Lowering(const std::vector<DType>& dtypes, DType result, const AttrsNode& attrs)
      : dtypes_(dtypes), result_(result), attrs_(attrs) {}

  bool is_float(const ScalarExpr& e) const { return dtype_is_float(scalar_dtype(e, dtypes_, result_)); }

  FloatFn as_float(const ScalarExpr& e) const {
    using Unary = float (*)(float);
    auto unary = [&](Unary f) -> FloatFn {
      FloatFn a = as_float(e.args[0]);
      return [f, a](const Element& x) { return f(a(x)); };
    };
    auto binary = [&](auto f) -> FloatFn {
      FloatFn a = as_float(e.args[0]), b = as_float(e.args[1]);
      return [f, a, b](const Element& x) { return f(a(x), b(x)); };
    };
    switch (e.op) {
      case ScalarOp::kOperand: return [k = size_t(e.operand)](const Element& x) { return x.f[k]; };
      case ScalarOp::kConstant: return [v = float(e.value)](const Element&) { return v; };
      case ScalarOp::kAttribute: return [v = float(float_attr(attrs_, e.attr))](const Element&) { return v; };
      case ScalarOp::kAdd: return binary([](float a, float b) { return a + b; });
      case ScalarOp::kSubtract: return binary([](float a, float b) { return a - b; });
      case ScalarOp::kMultiply: return binary([](float a, float b) { return a * b; });
      case ScalarOp::kDivide: return binary([](float a, float b) { return a / b; });
      case ScalarOp::kPower: return binary([](float a, float b) { return std::pow(a, b); });
      case ScalarOp::kMaximum: return binary(float_maximum);
      case ScalarOp::kMinimum: return binary(float_minimum);
      case ScalarOp::kNegate: return unary([](float a) { return -a; });
      case ScalarOp::kAbs: return unary([](float a) { return std::fabs(a); });
      case ScalarOp::kExp: return unary([](float a) { return std::exp(a); });
      case ScalarOp::kLog: return unary([](float a) { return std::log(a); });
      case ScalarOp::kSqrt: return unary([](float a) { return std::sqrt(a); });
      case ScalarOp::kTanh: return unary([](float a) { return std::tanh(a); });
      case ScalarOp::kErf: return unary([](float a) { return std::erf(a); });
      case ScalarOp::kSin: return unary([](float a) { return std::sin(a); });
      case ScalarOp::kCos: return unary([](float a) { return std::cos(a); });
      case ScalarOp::kTan: return unary([](float a) { return std::tan(a); });
      case ScalarOp::kAsin: return unary([](float a) { return std::asin(a); });
      case ScalarOp::kAcos: return unary([](float a) { return std::acos(a); });
      case ScalarOp::kAtan: return unary([](float a) { return std::atan(a); });
      case ScalarOp::kSinh: return unary([](float a) { return std::sinh(a); });
      case ScalarOp::kCosh: return unary([](float a) { return std::cosh(a); });
      case ScalarOp::kAsinh: return unary([](float a) { return std::asinh(a); });
      case ScalarOp::kAcosh: return unary([](float a) { return std::acosh(a); });
      case ScalarOp::kAtanh: return unary([](float a) { return std::atanh(a); });
      case ScalarOp::kFloor: return unary([](float a) { return std::floor(a); });
      case ScalarOp::kCeil: return unary([](float a) { return std::ceil(a); });
      // The default rounding mode rounds halves to even, without raising inexact.
      case ScalarOp::kRound: return unary([](float a) { return std::nearbyint(a); });
      case ScalarOp::kSelect: {
        IntFn c = truth(e.args[0]);
        FloatFn a = as_float(e.args[1]), b = as_float(e.args[2]);
        return [c, a, b](const Element& x) { return c(x) ? a(x) : b(x); };
      }
      case ScalarOp::kCast: {
        if (is_float(e.args[0])) return as_float(e.args[0]);  // rounds on store
        IntFn a = as_int(e.args[0]);
        return [a](const Element& x) { return float(a(x)); };
      }
      default: throw std::logic_error("a scalar comparison has no float value");
    }
  }

  IntFn as_int(const ScalarExpr& e) const {
    auto binary = [&](auto f) -> IntFn {
      IntFn a = as_int(e.args[0]), b = as_int(e.args[1]);
      return [f, a, b](const Element& x) { return int64_t(f(a(x), b(x))); };
    };
    auto compare = [&](auto f) -> IntFn {
      if (is_float(e.args[0])) {
        FloatFn a = as_float(e.args[0]), b = as_float(e.args[1]);
        return [f, a, b](const Element& x) { return int64_t(f(a(x), b(x))); };
      }
      return binary(f);
    };
    switch (e.op) {
      case ScalarOp::kOperand: return [k = size_t(e.operand)](const Element& x) { return x.i[k]; };
      case ScalarOp::kConstant: return [v = int64_t(e.value)](const Element&) { return v; };
      case ScalarOp::kAttribute:
        return [v = double_to_int64(float_attr(attrs_, e.attr))](const Element&) { return v; };
      case ScalarOp::kAdd: return binary(wrap_add);
      case ScalarOp::kSubtract: return binary(wrap_sub);
      case ScalarOp::kMultiply: return binary(wrap_mul);
      case ScalarOp::kDivide: return binary(int_divide);
      case ScalarOp::kPower: return binary(int_power);
      case ScalarOp::kMaximum: return binary([](int64_t a, int64_t b) { return std::max(a, b); });
      case ScalarOp::kMinimum: return binary([](int64_t a, int64_t b) { return std::min(a, b); });
      case ScalarOp::kEqual: return compare([](auto a, auto b) { return a == b; });
      case ScalarOp::kLess: return compare([](auto a, auto b) { return a < b; });
      case ScalarOp::kGreater: return compare([](auto a, auto b) { return a > b; });
      case ScalarOp::kNegate: {
        IntFn a = as_int(e.args[0]);
        return [a](const Element& x) { return wrap_sub(0, a(x)); };
      }
      case ScalarOp::kAbs: {
        IntFn a = as_int(e.args[0]);
        return [a](const Element& x) {
          int64_t v = a(x);
          return v < 0 ? wrap_sub(0, v) : v;
        };
      }
      case ScalarOp::kSelect: {
        IntFn c = truth(e.args[0]), a = as_int(e.args[1]), b = as_int(e.args[2]);
        return [c, a, b](const Element& x) { return c(x) ? a(x) : b(x); };
      }
      case ScalarOp::kCast: {
        if (!is_float(e.args[0])) return as_int(e.args[0]);  // wraps on store
        FloatFn a = as_float(e.args[0]);
        if (result_ == DType::kBool) return [a](const Element& x) { return int64_t(a(x) != 0.0f); };
        return [a](const Element& x) { return double_to_int64(a(x)); };
      }
      default: throw std::logic_error("a float-only scalar primitive reached an integer operand");
    }
  }

 private:
  // A condition: nonzero is true.
  IntFn truth(const ScalarExpr& e) const {
    if (!is_float(e)) return as_int(e);
    FloatFn a = as_float(e);
    return [a](const Element& x) { return int64_t(a(x) != 0.0f); };
  }

  const std::vector<DType>& dtypes_;
  DType result_;
  const AttrsNode& attrs_;
};

// The dtype a call of `meaning` produces.
DType result_dtype(const ScalarMeaning& meaning, const std::vector<DType>& dtypes, const AttrsNode& attrs) {
  if (meaning.expr.op != ScalarOp::kCast) return scalar_dtype(meaning.expr, dtypes, dtypes.back());
  std::string name = string_attr(attrs, meaning.expr.attr);
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) kernel_fail("unknown dtype \"" + name + "\"");
  return *dtype;
}

// The operand dtypes `meaning` accepts, in the order the errors name them.
void check_operands(const ScalarMeaning& meaning, const std::vector<const NDArray*>& in) {
  size_t first = meaning.first_value;
  const std::vector<std::string>& names = meaning.operand_names;
  if (meaning.inputs == ScalarInputs::kFloat) expect_float_dtype(*in[first], names[first]);
  if (meaning.inputs != ScalarInputs::kAny) expect_numeric_dtype(*in[first], names[first]);
  for (size_t k = first + 1; k < in.size(); ++k) expect_equal_dtypes(*in[k - 1], *in[k], names[k - 1], names[k]);
}

std::vector<NDArray> evaluate_scalar(const ScalarMeaning& meaning, size_t arity, const std::vector<Value>& args,
                                     const AttrsNode& attrs) {
  std::vector<const NDArray*> in;
  for (size_t k = 0; k < arity; ++k) in.push_back(&tensor_arg(args, k));
  check_operands(meaning, in);
  std::vector<DType> dtypes;
  std::vector<int64_t> shape = in[0]->shape();
  for (const NDArray* a : in) {
    dtypes.push_back(a->dtype());
    shape = broadcast_shape(shape, a->shape());
  }
  DType result = result_dtype(meaning, dtypes, attrs);
  // Offsets only for operands that broadcast; the others read element i.
  std::vector<std::vector<int64_t>> offsets(arity);
  std::vector<bool> float_operand(arity);
  for (size_t k = 0; k < arity; ++k) {
    if (in[k]->shape() != shape) offsets[k] = broadcast_offsets(shape, in[k]->shape());
    float_operand[k] = dtype_is_float(dtypes[k]);
  }
  Lowering lowering(dtypes, result, attrs);
  NDArray out(result, shape);
  Element element;
  auto load = [&](int64_t i) {
    for (size_t k = 0; k < arity; ++k) {
      int64_t at = offsets[k].empty() ? i : offsets[k][size_t(i)];
      if (float_operand[k]) element.f[k] = load_float(*in[k], at);
      else element.i[k] = load_int(*in[k], at);
    }
  };
  int64_t count = shape_numel(shape);
  if (dtype_is_float(result)) {
    FloatFn f = lowering.as_float(meaning.expr);
    for (int64_t i = 0; i < count; ++i) load(i), store_float(out, i, f(element));
  } else {
    IntFn f = lowering.as_int(meaning.expr);
    for (int64_t i = 0; i < count; ++i) load(i), store_int(out, i, f(element));
  }
  return {out};
}

}  // namespace

InterpKernelDef scalar_kernel(const OpDef& def) {
  size_t arity = size_t(scalar_arity(def.scalar->expr));
  if (arity == 0 || arity > kMaxOperands) throw std::logic_error("no element-wise kernel for " + def.name);
  return {[meaning = *def.scalar, arity](const std::vector<Value>& args, const AttrsNode& attrs) {
    return evaluate_scalar(meaning, arity, args, attrs);
  }};
}

}  // namespace switchyard
