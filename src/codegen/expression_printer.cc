// Prints kernel IR expressions as C-family source. Operators print through
// render_scalar (the one table of their spellings, the target's spelling
// chosen by the caller); index arithmetic is parenthesized only where C++
// precedence needs it, so loops read like hand-written ones.
#include "codegen/expression_printer.h"

#include <cmath>
#include <stdexcept>

#include "codegen/kernel_code.h"

namespace switchyard {

namespace kernel_ir {

namespace {

// Whether `e` renders as a name, number or function-call-like term that
// needs no parentheses as an operand.
bool is_atom(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIndex: return e->int_value >= 0;
    case ExprKind::kInt: return true;  // a name or a function-style cast
    case ExprKind::kFloat: return !std::signbit(e->float_value);
    case ExprKind::kVar: case ExprKind::kLoad: case ExprKind::kCast: case ExprKind::kCheckedIndex:
    case ExprKind::kFusedMultiplyAdd: return true;
    case ExprKind::kBinary: return e->binary == BinaryOp::kMin;
    default: return false;
  }
}

const char* symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return " + ";
    case BinaryOp::kSub: return " - ";
    case BinaryOp::kMul: return " * ";
    case BinaryOp::kDiv: return " / ";
    case BinaryOp::kMod: return " % ";
    case BinaryOp::kMin: return ", ";
    case BinaryOp::kLess: return " < ";
    case BinaryOp::kGreater: return " > ";
    case BinaryOp::kLessEqual: return " <= ";
    case BinaryOp::kNotEqual: return " != ";
    case BinaryOp::kOr: return " || ";
    case BinaryOp::kAnd: return " && ";
  }
  return "";
}

bool is_sum(const Expr& e) {
  return e->kind == ExprKind::kBinary && (e->binary == BinaryOp::kAdd || e->binary == BinaryOp::kSub);
}


}  // namespace

std::string ExpressionPrinter::expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIndex: return std::to_string(e->int_value);
    case ExprKind::kInt:
      if (e->precision == Precision::kAccumulator) return "uint64_t(" + std::to_string(e->int_value) + ")";
      if (e->dtype == DType::kInt64)
        return e->int_value == INT64_MIN ? "INT64_MIN" : "int64_t(" + std::to_string(e->int_value) + ")";
      if (e->dtype == DType::kInt32) return "int32_t(" + std::to_string(e->int_value) + ")";
      if (e->dtype == DType::kUInt64) return "uint64_t(" + std::to_string(uint64_t(e->int_value)) + "ull)";
      return literal(e->dtype, double(e->int_value));
    case ExprKind::kFloat:
      if (e->precision == Precision::kAccumulator) return double_literal(e->float_value);
      return literal(e->dtype, e->float_value);
    case ExprKind::kVar: return e->operands.empty() ? e->name : e->name + "[" + expr(e->operands[0]) + "]";
    case ExprKind::kBinary: return binary(e);
    case ExprKind::kLoad:
      return load_element(e->dtype, e->name + "[" + expr(e->operands[0]) + "]", &helpers_);
    case ExprKind::kSelect: {
      const Expr& otherwise = e->operands[2];
      std::string tail = expr(otherwise);
      if (otherwise->kind == ExprKind::kSelect) tail = "(" + tail + ")";
      return expr(e->operands[0]) + " ? " + operand(e->operands[1]) + " : " + tail;
    }
    case ExprKind::kCast: {
      const Expr& value = e->operands[0];
      std::string type = kernel_value_type(e->dtype, e->precision);
      if (dtype_is_float(value->dtype) && !dtype_is_float(e->dtype) && e->dtype != DType::kBool) {
        if (e->int_value == 1) return type + "(int32_t(" + expr(value) + "))";  // cast_in_int32_range
        helpers_.insert(CpuHelper::kFloatToInt);
        const char* convert = e->dtype == DType::kUInt64 ? "sy_float_to_uint64(" : "sy_float_to_int64(";
        return type + "(" + convert + expr(value) + "))";
      }
      // A cast to float16 or bfloat16 rounds to what that dtype holds.
      std::string converted = type + "(" + expr(value) + ")";
      return e->precision == Precision::kCompute ? round_to_dtype(e->dtype, converted, &helpers_) : converted;
    }
    case ExprKind::kCall: {
      // In double (Precision::kAccumulator) the operands are doubles, and
      // C++ overloads compute the float32 operator's C++ form in double.
      std::vector<std::string> values;
      for (const Expr& arg : e->operands) values.push_back(expr(arg));
      bool in_double = e->precision == Precision::kAccumulator && spelling_.in_double;
      return render_scalar(*e->call, values, helpers_, in_double ? *spelling_.in_double : spelling_);
    }
    case ExprKind::kCheckedIndex:
      helpers_.insert(CpuHelper::kCheckedIndex);
      return "sy_checked_index(" + expr(e->operands[0]) + ", " + std::to_string(e->int_value) + ", " +
             kFaultsArgument + ")";
    // One rounding on every target; on the CPU vfmadd where it has FMA
    // (-ffp-contract=off fuses nothing else), a library call where not.
    case ExprKind::kFusedMultiplyAdd:
      return std::string(spelling_.fused_multiply_add) + "(" + expr(e->operands[0]) + ", " + expr(e->operands[1]) +
             ", " + expr(e->operands[2]) + ")";
  }
  throw std::logic_error("unknown kernel IR expression");
}

// An operand of a tighter-binding operator: parenthesized unless atomic.
std::string ExpressionPrinter::operand(const Expr& e) {
  std::string text = expr(e);
  // An operator's C++ form may be a name or an infix expression.
  if (e->kind == ExprKind::kCall) return parenthesize(text);
  return is_atom(e) ? text : "(" + text + ")";
}

std::string ExpressionPrinter::binary(const Expr& e) {
  const Expr& a = e->operands[0];
  const Expr& b = e->operands[1];
  std::string op = symbol(e->binary);
  switch (e->binary) {
    case BinaryOp::kAdd: return sum_term(a) + op + sum_term(b);
    case BinaryOp::kSub: return sum_term(a) + op + (is_sum(b) ? operand(b) : sum_term(b));
    case BinaryOp::kMin: return "sy_min(" + expr(a) + op + expr(b) + ")";
    case BinaryOp::kLess: case BinaryOp::kGreater: case BinaryOp::kLessEqual: case BinaryOp::kNotEqual:
      return sum_term(a) + op + sum_term(b);
    // Comparisons bind tighter than && and ||; && in || is parenthesized.
    case BinaryOp::kOr: case BinaryOp::kAnd: return logical_term(a, e->binary) + op + logical_term(b, e->binary);
    // A negative immediate needs no parentheses on the right: "i * -2".
    default: return operand(a) + op + (b->kind == ExprKind::kIndex ? expr(b) : operand(b));
  }
}

// A term of a sum or comparison: products and sums need no parentheses.
std::string ExpressionPrinter::sum_term(const Expr& e) {
  if (e->kind == ExprKind::kBinary && !is_comparison(e->binary)) return expr(e);
  return operand(e);
}

// A term of `op`, kOr or kAnd: a comparison or the same operator needs no parentheses.
std::string ExpressionPrinter::logical_term(const Expr& e, BinaryOp op) {
  bool logical = e->kind == ExprKind::kBinary && (e->binary == BinaryOp::kOr || e->binary == BinaryOp::kAnd);
  if (e->kind == ExprKind::kBinary && is_comparison(e->binary) && (!logical || e->binary == op)) return expr(e);
  return operand(e);
}

}  // namespace kernel_ir

std::string render_kernel_expr(const kernel_ir::Expr& e, const ScalarSpelling& spelling,
                               std::set<CpuHelper>& helpers) {
  return kernel_ir::ExpressionPrinter(spelling, helpers).expr(e);
}

}  // namespace switchyard
