// The scalar meaning of an element-wise operator: a small expression over
// its operands, written once in the operator's row (op/elementwise_ops.cc)
// and evaluated by every backend (the interpreter's kernels_elementwise.cc,
// the CPU generator's scalar_spelling.cc). Each primitive has one evaluator per
// backend; a composite row (sigmoid = 1 / (1 + exp(-x))) is built from them.
//
// The rules every evaluator follows: an expression is computed in its
// operands' compute type (float for every floating-point dtype, int64 for
// integers and bool) and the operator's result is rounded to its dtype once,
// at the end (float16/bfloat16 round after every operator, not inside one);
// integers wrap; NaN propagates through maximum and minimum.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dtype.h"

namespace switchyard {

enum class ScalarOp : uint8_t {
  kOperand,    // operand `operand`
  kConstant,   // `value`, a small integer, in the dtype of the last operand
  kAttribute,  // the number attribute `attr` in the last operand's dtype (integers truncate, saturating)
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,   // integers: truncating; by zero an error (generated code reports a kernel fault)
  kPower,    // integers: wrapping; a negative exponent an error (likewise)
  kMaximum,  // NaN propagates
  kMinimum,
  kEqual,  // comparisons give bool
  kLess,
  kGreater,
  kNegate,
  kAbs,
  kExp,  // exp ... round need a floating-point operand
  kLog,
  kSqrt,
  kTanh,
  kErf,
  kSin,  // sin ... atanh: the C library's functions
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kFloor,
  kCeil,
  kRound,   // half to even
  kFmod,    // C's fmod(a, b): a - trunc(a / b) * b, exact, with a's sign (floating point only)
  kShiftLeft,   // a << b, b at least the dtype's width: 0 (unsigned integers only)
  kShiftRight,  // a >> b, logical, likewise
  kSelect,  // args[0] ? args[1] : args[2]
  kCast,    // to the dtype the string attribute `attr` names: the result dtype (only at the root)
};

struct ScalarExpr {
  ScalarOp op;
  std::vector<ScalarExpr> args;
  int operand = 0;   // kOperand
  double value = 0;  // kConstant
  std::string attr;  // kAttribute, kCast
};

// Which operand dtypes an operator accepts (beyond its type relation).
enum class ScalarInputs : uint8_t {
  kAny,
  kNumeric,  // not bool (checked by the interpreter)
  kFloat,    // floating-point only (checked by every backend)
};

// An operator's element-wise meaning (OpDef::scalar).
struct ScalarMeaning {
  ScalarExpr expr;
  ScalarInputs inputs = ScalarInputs::kAny;
  // The operands' names in errors ("the input", "argument 0", "x").
  std::vector<std::string> operand_names;
  // Operands before it are conditions; the rest (the values) share a dtype.
  size_t first_value = 0;
};

// The dtype `e` computes, given its operands' dtypes and the operator's
// result dtype (what a cast converts to).
DType scalar_dtype(const ScalarExpr& e, const std::vector<DType>& operands, DType result);
// Whether `e`'s value is always one of its operands or constants, so it
// needs no rounding to a narrow float dtype.
bool scalar_is_exact(const ScalarExpr& e);
// The number of operands `e` reads (one more than the largest index).
int scalar_arity(const ScalarExpr& e);

// Builders, so rows read as formulas: `one / (one + exp(-x))`.
namespace scalar {

ScalarExpr operand(int index);
ScalarExpr constant(double value);
ScalarExpr attribute(std::string name);
ScalarExpr call(ScalarOp op, std::vector<ScalarExpr> args);
ScalarExpr operator+(ScalarExpr a, ScalarExpr b);
ScalarExpr operator-(ScalarExpr a, ScalarExpr b);
ScalarExpr operator*(ScalarExpr a, ScalarExpr b);
ScalarExpr operator/(ScalarExpr a, ScalarExpr b);
ScalarExpr operator-(ScalarExpr a);
ScalarExpr select(ScalarExpr condition, ScalarExpr if_true, ScalarExpr if_false);
ScalarExpr cast(ScalarExpr x, std::string dtype_attribute);

}  // namespace scalar

}  // namespace switchyard
