// Expressions of the kernel IR, the loop-nest form every generated kernel
// takes before a renderer (C++ today, CUDA next) prints it. One node type for
// every kind, like tinygrad's UOp: a kind, a dtype, operands and the few
// fields a kind uses, so hashing and equality are written once, generically.
// Nodes are immutable and shared; equality and hashing are structural.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel_ir/scalar_call.h"
#include "runtime/dtype.h"

namespace switchyard::kernel_ir {

enum class ExprKind : uint8_t {
  kIndex,   // an immediate of index arithmetic (int64): `int_value`
  kInt,     // an integer value of `dtype`: `int_value`
  kFloat,   // a floating-point value of `dtype`: `float_value`
  kVar,     // a loop, let or parameter variable `name`; with one operand,
            // element operands[0] of the local array `name`
  kBinary,  // index arithmetic or a comparison: `binary` of operands a, b
  kLoad,    // element `operands[0]` of buffer `name` (of element type `dtype`)
  kSelect,  // operands: condition, then, else
  kCast,    // operands[0] converted to `dtype`; from floating point to an
            // integer it truncates and saturates, NaN giving 0 (the cast
            // operator's rule)
  kCall,    // the element-wise operator `call` applied to the operands
  kCheckedIndex,  // index operands[0] into an axis of `int_value`: outside it, a fault and 0
  kFusedMultiplyAdd,  // operands a * b + c rounded once, in the compute type
};

// Index or accumulator arithmetic (kMin: the smaller), comparisons and the
// logical or and and of comparisons.
enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kMod, kMin, kLess, kGreater, kLessEqual, kNotEqual, kOr, kAnd
};

bool is_comparison(BinaryOp op);  // kLess .. kAnd: the value is a bool

// The type a value of `dtype` is held in: its compute type (float for every
// floating-point dtype) or its accumulator type, the wide one sums
// accumulate in (double for floating point, wrapping uint64 for integers).
enum class Precision : uint8_t { kCompute, kAccumulator };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  DType dtype;  // of the value: a tensor dtype; index arithmetic is int64
  // The type the value is held and computed in. Arithmetic and a select
  // take their (first) operand's; a call states its own (`call`).
  Precision precision = Precision::kCompute;
  int64_t int_value = 0;
  double float_value = 0;
  std::string name;
  BinaryOp binary = BinaryOp::kAdd;
  std::optional<ScalarCall> call;
  std::vector<Expr> operands;
  size_t hash = 0;  // structural, set by the constructors
};

Expr index(int64_t value);
Expr int_value(DType dtype, int64_t value);
Expr float_value(DType dtype, double value);
Expr var(std::string name, DType dtype = DType::kInt64);
Expr element(std::string array, DType dtype, Expr at);  // of a local array
Expr binary(BinaryOp op, Expr a, Expr b);
Expr load(std::string buffer, DType dtype, Expr at);
Expr select(Expr condition, Expr then_value, Expr else_value);
Expr cast(DType dtype, Expr value);
// A kCast of a floating-point value known to lie within int32's range and
// not to be NaN (a clip's result: clip maps NaN to its lower bound) to an
// integer `dtype` of at most 32 bits, marked (int_value 1) so a renderer may
// convert through int32: the same value as the saturating conversion, whose
// NaN and range checks on 64-bit lanes made every quantizing loop slow.
Expr cast_in_int32_range(DType dtype, Expr value);
// The operator applied in its dtypes' compute type, or at kAccumulator in
// double: then its dtypes are float32 and its operands are held in double
// (batch_norm's sqrt, as the reference computes it). A renderer prints what
// the precision says, not what its language would promote to.
Expr call(ScalarCall op, std::vector<Expr> args, Precision precision = Precision::kCompute);
// `index` when it lies in [0, extent); otherwise the kernel reports an
// index fault to the runtime (the run fails) and the index reads as 0.
Expr checked_index(Expr index, int64_t extent);
// a * b + c with one rounding, on float32 compute-typed operands: a
// generated convolution's float sums (docs/operators.md, "Edge cases").
// Correct on every CPU; vectorised where the target has FMA instructions.
Expr fused_multiply_add(Expr a, Expr b, Expr c);
// `e` held in its dtype's accumulator type: a variable or array element
// declared so, an immediate or cast of that type, arithmetic on them. Not a
// call, whose precision is checked when it is built.
Expr in_accumulator(const Expr& e);

// Index arithmetic that folds the trivial cases (x + 0, x * 1, x * 0, 0 + k).
Expr add(const Expr& a, int64_t k);
Expr add(const Expr& a, const Expr& b);
Expr mul(const Expr& a, int64_t k);
Expr mul(const Expr& a, const Expr& b);
bool is_index(const Expr& e, int64_t value);

// `e` with every subexpression for which `replace` gives a value replaced
// by it (the replacement is not visited again).
Expr substitute(const Expr& e, const std::function<Expr(const Expr&)>& replace);

// `e` with the variables (and local arrays) it names and the buffers it
// loads renamed where `variables` and `buffers` map their names.
Expr renamed(const Expr& e, const std::map<std::string, std::string>& variables,
             const std::map<std::string, std::string>& buffers);

// Structural equality: spans (of operator calls) do not count.
bool equal(const Expr& a, const Expr& b);

}  // namespace switchyard::kernel_ir
