// Reference kernels of the element-wise and broadcasting operators, derived
// from each operator's scalar meaning (OpDef::scalar, op/elementwise_ops.cc).
// A call lowers the meaning once into closures for the operands' dtypes, then
// runs them per element.
//
// Floating-point math is done in float (float16 and bfloat16 through float,
// rounded back on store), or in double where a float64 operand or result
// takes part; integer math in int64 wrapping to the dtype's width
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
// operands (F: float, or double where float64 takes part), i for integer
// and bool ones (uint64 as its bits).
template <typename F>
struct Element {
  std::array<F, kMaxOperands> f{};
  std::array<int64_t, kMaxOperands> i{};
};

int64_t int_divide(int64_t a, int64_t b) {
  if (b == 0) throw Error(ErrorKind::kRuntime, "integer division by zero");
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 overflows; wrap as the narrower types do
  return a / b;
}

int64_t unsigned_divide(int64_t a, int64_t b) {
  if (b == 0) throw Error(ErrorKind::kRuntime, "integer division by zero");
  return int64_t(uint64_t(a) / uint64_t(b));
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
template <typename F>
F float_maximum(F a, F b) { return std::isnan(a) || a > b ? a : b; }
template <typename F>
F float_minimum(F a, F b) { return std::isnan(a) || a < b ? a : b; }

// Lowers a scalar expression for one call's operand dtypes and attributes.
template <typename F>
class Lowering {
 public:
  using FloatFn = std::function<F(const Element<F>&)>;
  using IntFn = std::function<int64_t(const Element<F>&)>;

  Lowering(const std::vector<DType>& dtypes, DType result, const AttrsNode& attrs)
      : dtypes_(dtypes), result_(result), attrs_(attrs) {}

  bool is_float(const ScalarExpr& e) const { return dtype_is_float(scalar_dtype(e, dtypes_, result_)); }
  // uint64 is held as its bits in int64: its order, division and conversion differ.
  bool is_uint64(const ScalarExpr& e) const { return scalar_dtype(e, dtypes_, result_) == DType::kUInt64; }

  FloatFn as_float(const ScalarExpr& e) const {
    using Unary = F (*)(F);
    auto unary = [&](Unary f) -> FloatFn {
      FloatFn a = as_float(e.args[0]);
      return [f, a](const Element<F>& x) { return f(a(x)); };
    };
    auto binary = [&](auto f) -> FloatFn {
      FloatFn a = as_float(e.args[0]), b = as_float(e.args[1]);
      return [f, a, b](const Element<F>& x) { return f(a(x), b(x)); };
    };
    switch (e.op) {
      case ScalarOp::kOperand: return [k = size_t(e.operand)](const Element<F>& x) { return x.f[k]; };
      case ScalarOp::kConstant: return [v = F(e.value)](const Element<F>&) { return v; };
      case ScalarOp::kAttribute: return [v = F(float_attr(attrs_, e.attr))](const Element<F>&) { return v; };
      case ScalarOp::kAdd: return binary([](F a, F b) { return a + b; });
      case ScalarOp::kSubtract: return binary([](F a, F b) { return a - b; });
      case ScalarOp::kMultiply: return binary([](F a, F b) { return a * b; });
      case ScalarOp::kDivide: return binary([](F a, F b) { return a / b; });
      case ScalarOp::kPower: return binary([](F a, F b) { return F(std::pow(a, b)); });
      case ScalarOp::kMaximum: return binary(float_maximum<F>);
      case ScalarOp::kMinimum: return binary(float_minimum<F>);
      case ScalarOp::kNegate: return unary([](F a) { return -a; });
      case ScalarOp::kAbs: return unary([](F a) { return F(std::fabs(a)); });
      case ScalarOp::kExp: return unary([](F a) { return F(std::exp(a)); });
      case ScalarOp::kLog: return unary([](F a) { return F(std::log(a)); });
      case ScalarOp::kSqrt: return unary([](F a) { return F(std::sqrt(a)); });
      case ScalarOp::kTanh: return unary([](F a) { return F(std::tanh(a)); });
      case ScalarOp::kErf: return unary([](F a) { return F(std::erf(a)); });
      case ScalarOp::kSin: return unary([](F a) { return F(std::sin(a)); });
      case ScalarOp::kCos: return unary([](F a) { return F(std::cos(a)); });
      case ScalarOp::kTan: return unary([](F a) { return F(std::tan(a)); });
      case ScalarOp::kAsin: return unary([](F a) { return F(std::asin(a)); });
      case ScalarOp::kAcos: return unary([](F a) { return F(std::acos(a)); });
      case ScalarOp::kAtan: return unary([](F a) { return F(std::atan(a)); });
      case ScalarOp::kSinh: return unary([](F a) { return F(std::sinh(a)); });
      case ScalarOp::kCosh: return unary([](F a) { return F(std::cosh(a)); });
      case ScalarOp::kAsinh: return unary([](F a) { return F(std::asinh(a)); });
      case ScalarOp::kAcosh: return unary([](F a) { return F(std::acosh(a)); });
      case ScalarOp::kAtanh: return unary([](F a) { return F(std::atanh(a)); });
      case ScalarOp::kFloor: return unary([](F a) { return F(std::floor(a)); });
      case ScalarOp::kCeil: return unary([](F a) { return F(std::ceil(a)); });
      // The default rounding mode rounds halves to even, without raising inexact.
      case ScalarOp::kRound: return unary([](F a) { return F(std::nearbyint(a)); });
      case ScalarOp::kFmod: return binary([](F a, F b) { return F(std::fmod(a, b)); });
      case ScalarOp::kSelect: {
        IntFn c = truth(e.args[0]);
        FloatFn a = as_float(e.args[1]), b = as_float(e.args[2]);
        return [c, a, b](const Element<F>& x) { return c(x) ? a(x) : b(x); };
      }
      case ScalarOp::kCast: {
        if (is_float(e.args[0])) return as_float(e.args[0]);  // rounds on store
        IntFn a = as_int(e.args[0]);
        if (is_uint64(e.args[0])) return [a](const Element<F>& x) { return F(uint64_t(a(x))); };
        return [a](const Element<F>& x) { return F(a(x)); };
      }
      default: throw std::logic_error("a scalar comparison has no float value");
    }
  }

  IntFn as_int(const ScalarExpr& e) const {
    auto binary = [&](auto f) -> IntFn {
      IntFn a = as_int(e.args[0]), b = as_int(e.args[1]);
      return [f, a, b](const Element<F>& x) { return int64_t(f(a(x), b(x))); };
    };
    // Signed operands compare as int64, uint64 ones as their bits.
    auto ordered = [&](auto f) -> IntFn {
      if (!is_uint64(e.args[0])) return binary(f);
      return binary([f](int64_t a, int64_t b) { return f(uint64_t(a), uint64_t(b)); });
    };
    auto compare = [&](auto f) -> IntFn {
      if (is_float(e.args[0])) {
        FloatFn a = as_float(e.args[0]), b = as_float(e.args[1]);
        return [f, a, b](const Element<F>& x) { return int64_t(f(a(x), b(x))); };
      }
      return ordered(f);
    };
    switch (e.op) {
      case ScalarOp::kOperand: return [k = size_t(e.operand)](const Element<F>& x) { return x.i[k]; };
      case ScalarOp::kConstant: return [v = int64_t(e.value)](const Element<F>&) { return v; };
      case ScalarOp::kAttribute:
        return [v = double_to_int64(float_attr(attrs_, e.attr))](const Element<F>&) { return v; };
      case ScalarOp::kAdd: return binary(wrap_add);
      case ScalarOp::kSubtract: return binary(wrap_sub);
      case ScalarOp::kMultiply: return binary(wrap_mul);
      case ScalarOp::kDivide: return binary(is_uint64(e) ? unsigned_divide : int_divide);
      case ScalarOp::kPower: return binary(int_power);
      case ScalarOp::kShiftLeft:
      case ScalarOp::kShiftRight: {
        // The operands are unsigned, held as their bits; the shift by the
        // width or more, which C leaves undefined, gives 0.
        uint64_t width = uint64_t(dtype_bytes(scalar_dtype(e, dtypes_, result_))) * 8;
        bool left = e.op == ScalarOp::kShiftLeft;
        return binary([width, left](int64_t a, int64_t b) {
          if (uint64_t(b) >= width) return uint64_t(0);
          return left ? uint64_t(a) << uint64_t(b) : uint64_t(a) >> uint64_t(b);
        });
      }
      case ScalarOp::kMaximum: return ordered([](auto a, auto b) { return std::max(a, b); });
      case ScalarOp::kMinimum: return ordered([](auto a, auto b) { return std::min(a, b); });
      case ScalarOp::kEqual: return compare([](auto a, auto b) { return a == b; });
      case ScalarOp::kLess: return compare([](auto a, auto b) { return a < b; });
      case ScalarOp::kGreater: return compare([](auto a, auto b) { return a > b; });
      case ScalarOp::kNegate: {
        IntFn a = as_int(e.args[0]);
        return [a](const Element<F>& x) { return wrap_sub(0, a(x)); };
      }
      case ScalarOp::kAbs: {
        IntFn a = as_int(e.args[0]);
        if (is_uint64(e)) return a;  // its bits may read as negative int64
        return [a](const Element<F>& x) {
          int64_t v = a(x);
          return v < 0 ? wrap_sub(0, v) : v;
        };
      }
      case ScalarOp::kSelect: {
        IntFn c = truth(e.args[0]), a = as_int(e.args[1]), b = as_int(e.args[2]);
        return [c, a, b](const Element<F>& x) { return c(x) ? a(x) : b(x); };
      }
      case ScalarOp::kCast: {
        if (!is_float(e.args[0])) return as_int(e.args[0]);  // wraps on store
        FloatFn a = as_float(e.args[0]);
        if (result_ == DType::kBool) return [a](const Element<F>& x) { return int64_t(a(x) != F(0)); };
        if (result_ == DType::kUInt64) return [a](const Element<F>& x) { return int64_t(double_to_uint64(a(x))); };
        return [a](const Element<F>& x) { return double_to_int64(a(x)); };
      }
      default: throw std::logic_error("a float-only scalar primitive reached an integer operand");
    }
  }

 private:
  // A condition: nonzero is true.
  IntFn truth(const ScalarExpr& e) const {
    if (!is_float(e)) return as_int(e);
    FloatFn a = as_float(e);
    return [a](const Element<F>& x) { return int64_t(a(x) != F(0)); };
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

// Computes every element of `out`, floating-point math in F.
template <typename F>
void run_elements(const ScalarMeaning& meaning, const std::vector<const NDArray*>& in,
                  const std::vector<std::vector<int64_t>>& offsets, const std::vector<bool>& float_operand,
                  const AttrsNode& attrs, NDArray& out) {
  std::vector<DType> dtypes;
  for (const NDArray* a : in) dtypes.push_back(a->dtype());
  Lowering<F> lowering(dtypes, out.dtype(), attrs);
  Element<F> element;
  auto load = [&](int64_t i) {
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t at = offsets[k].empty() ? i : offsets[k][size_t(i)];
      if (float_operand[k]) element.f[k] = F(load_double(*in[k], at));
      else element.i[k] = load_int(*in[k], at);
    }
  };
  int64_t count = out.numel();
  if (dtype_is_float(out.dtype())) {
    auto f = lowering.as_float(meaning.expr);
    for (int64_t i = 0; i < count; ++i) load(i), store_double(out, i, double(f(element)));
  } else {
    auto f = lowering.as_int(meaning.expr);
    for (int64_t i = 0; i < count; ++i) load(i), store_int(out, i, f(element));
  }
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
  NDArray out(result, shape);
  bool wide = result == DType::kFloat64;
  for (DType d : dtypes) wide = wide || d == DType::kFloat64;
  if (wide) run_elements<double>(meaning, in, offsets, float_operand, attrs, out);
  else run_elements<float>(meaning, in, offsets, float_operand, attrs, out);
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
