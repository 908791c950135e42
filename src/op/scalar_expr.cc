// Typing and builders of scalar expressions.
#include "op/scalar_expr.h"

#include <algorithm>

namespace switchyard {

DType scalar_dtype(const ScalarExpr& e, const std::vector<DType>& operands, DType result) {
  switch (e.op) {
    case ScalarOp::kOperand: return operands.at(size_t(e.operand));
    case ScalarOp::kConstant:
    case ScalarOp::kAttribute: return operands.back();
    case ScalarOp::kEqual:
    case ScalarOp::kLess:
    case ScalarOp::kGreater: return DType::kBool;
    case ScalarOp::kCast: return result;
    case ScalarOp::kSelect: return scalar_dtype(e.args.at(1), operands, result);
    default: return scalar_dtype(e.args.at(0), operands, result);
  }
}

bool scalar_is_exact(const ScalarExpr& e) {
  switch (e.op) {
    case ScalarOp::kOperand:
    case ScalarOp::kConstant: return true;
    case ScalarOp::kSelect: return scalar_is_exact(e.args[1]) && scalar_is_exact(e.args[2]);
    case ScalarOp::kMaximum:
    case ScalarOp::kMinimum:
    case ScalarOp::kNegate:
    case ScalarOp::kAbs:
      return std::all_of(e.args.begin(), e.args.end(), [](const ScalarExpr& a) { return scalar_is_exact(a); });
    default: return false;
  }
}

int scalar_arity(const ScalarExpr& e) {
  int arity = e.op == ScalarOp::kOperand ? e.operand + 1 : 0;
  for (const ScalarExpr& a : e.args) arity = std::max(arity, scalar_arity(a));
  return arity;
}

namespace scalar {

ScalarExpr operand(int index) { return {.op = ScalarOp::kOperand, .operand = index}; }
ScalarExpr constant(double value) { return {.op = ScalarOp::kConstant, .value = value}; }
ScalarExpr attribute(std::string name) { return {.op = ScalarOp::kAttribute, .attr = std::move(name)}; }
ScalarExpr call(ScalarOp op, std::vector<ScalarExpr> args) { return {.op = op, .args = std::move(args)}; }
ScalarExpr operator+(ScalarExpr a, ScalarExpr b) { return call(ScalarOp::kAdd, {std::move(a), std::move(b)}); }
ScalarExpr operator-(ScalarExpr a, ScalarExpr b) { return call(ScalarOp::kSubtract, {std::move(a), std::move(b)}); }
ScalarExpr operator*(ScalarExpr a, ScalarExpr b) { return call(ScalarOp::kMultiply, {std::move(a), std::move(b)}); }
ScalarExpr operator/(ScalarExpr a, ScalarExpr b) { return call(ScalarOp::kDivide, {std::move(a), std::move(b)}); }
ScalarExpr operator-(ScalarExpr a) { return call(ScalarOp::kNegate, {std::move(a)}); }
ScalarExpr select(ScalarExpr condition, ScalarExpr if_true, ScalarExpr if_false) {
  return call(ScalarOp::kSelect, {std::move(condition), std::move(if_true), std::move(if_false)});
}

ScalarExpr cast(ScalarExpr x, std::string dtype_attribute) {
  return {.op = ScalarOp::kCast, .args = {std::move(x)}, .attr = std::move(dtype_attribute)};
}

}  // namespace scalar

}  // namespace switchyard
