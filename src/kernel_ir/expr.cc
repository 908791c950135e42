// Constructors, folding helpers and structural equality of kernel IR
// expressions.
#include "kernel_ir/expr.h"

#include <bit>
#include <functional>
#include <map>
#include <stdexcept>

#include "kernel_ir/hash.h"

namespace switchyard::kernel_ir {

namespace {

Expr make(ExprNode node) {
  size_t h = hash_mix(size_t(node.kind), size_t(node.dtype));
  h = hash_mix(h, size_t(node.precision));
  h = hash_mix(h, std::hash<int64_t>()(node.int_value));
  h = hash_mix(h, std::bit_cast<uint64_t>(node.float_value));
  h = hash_mix(h, std::hash<std::string>()(node.name));
  h = hash_mix(h, size_t(node.binary));
  if (node.call) h = hash_mix(h, scalar_call_hash(*node.call));
  for (const Expr& e : node.operands) h = hash_mix(h, e->hash);
  node.hash = h;
  return std::make_shared<const ExprNode>(std::move(node));
}

}  // namespace

Expr index(int64_t value) { return make({.kind = ExprKind::kIndex, .dtype = DType::kInt64, .int_value = value}); }

Expr int_value(DType dtype, int64_t value) { return make({.kind = ExprKind::kInt, .dtype = dtype, .int_value = value}); }

Expr float_value(DType dtype, double value) {
  return make({.kind = ExprKind::kFloat, .dtype = dtype, .float_value = value});
}

Expr var(std::string name, DType dtype) { return make({.kind = ExprKind::kVar, .dtype = dtype, .name = std::move(name)}); }

Expr substitute(const Expr& e, const std::function<Expr(const Expr&)>& replace) {
  if (Expr replaced = replace(e)) return replaced;
  ExprNode node = *e;
  bool changed = false;
  for (Expr& operand : node.operands) {
    Expr substituted = substitute(operand, replace);
    changed = changed || substituted != operand;
    operand = std::move(substituted);
  }
  return changed ? make(std::move(node)) : e;
}

Expr renamed(const Expr& e, const std::map<std::string, std::string>& variables,
             const std::map<std::string, std::string>& buffers) {
  const std::map<std::string, std::string>* names =
      e->kind == ExprKind::kVar ? &variables : e->kind == ExprKind::kLoad ? &buffers : nullptr;
  auto it = names ? names->find(e->name) : variables.end();
  ExprNode node = *e;
  bool changed = names && it != names->end();
  if (changed) node.name = it->second;
  for (Expr& operand : node.operands) {
    Expr after = renamed(operand, variables, buffers);
    changed = changed || after != operand;
    operand = std::move(after);
  }
  return changed ? make(std::move(node)) : e;
}

bool is_comparison(BinaryOp op) { return op >= BinaryOp::kLess; }

Expr binary(BinaryOp op, Expr a, Expr b) {
  bool comparison = is_comparison(op);
  DType dtype = comparison ? DType::kBool : a->dtype;
  Precision precision = comparison ? Precision::kCompute : a->precision;
  return make({.kind = ExprKind::kBinary, .dtype = dtype, .precision = precision, .binary = op,
               .operands = {std::move(a), std::move(b)}});
}

Expr element(std::string array, DType dtype, Expr at) {
  return make({.kind = ExprKind::kVar, .dtype = dtype, .name = std::move(array), .operands = {std::move(at)}});
}

Expr load(std::string buffer, DType dtype, Expr at) {
  return make({.kind = ExprKind::kLoad, .dtype = dtype, .name = std::move(buffer), .operands = {std::move(at)}});
}

Expr select(Expr condition, Expr then_value, Expr else_value) {
  DType dtype = then_value->dtype;
  Precision precision = then_value->precision;
  return make({.kind = ExprKind::kSelect,
               .dtype = dtype,
               .precision = precision,
               .operands = {std::move(condition), std::move(then_value), std::move(else_value)}});
}

Expr cast(DType dtype, Expr value) { return make({.kind = ExprKind::kCast, .dtype = dtype, .operands = {std::move(value)}}); }

Expr cast_in_int32_range(DType dtype, Expr value) {
  if (!dtype_is_float(value->dtype) || dtype_is_float(dtype) || dtype == DType::kBool || dtype_bytes(dtype) > 4)
    throw std::logic_error("an in-range cast converts a float to an integer of at most 32 bits");
  return make({.kind = ExprKind::kCast, .dtype = dtype, .int_value = 1, .operands = {std::move(value)}});
}

Expr call(ScalarCall op, std::vector<Expr> args, Precision precision) {
  if (precision == Precision::kAccumulator) {
    bool float32 = op.result_dtype == DType::kFloat32;
    for (DType d : op.arg_dtypes) float32 = float32 && d == DType::kFloat32;
    for (const Expr& a : args)
      float32 = float32 && a->dtype == DType::kFloat32 && a->precision == Precision::kAccumulator;
    if (!float32)
      throw std::logic_error("a call in double takes float32-typed operands held in double: " + op.op->name);
  }
  DType dtype = op.result_dtype;
  return make({.kind = ExprKind::kCall, .dtype = dtype, .precision = precision, .call = std::move(op),
               .operands = std::move(args)});
}

Expr checked_index(Expr index, int64_t extent) {
  return make(
      {.kind = ExprKind::kCheckedIndex, .dtype = DType::kInt64, .int_value = extent, .operands = {std::move(index)}});
}

Expr fused_multiply_add(Expr a, Expr b, Expr c) {
  for (const Expr* e : {&a, &b, &c})
    if ((*e)->dtype != DType::kFloat32 || (*e)->precision != Precision::kCompute)
      throw std::logic_error("a fused multiply-add takes float32 operands in the compute type");
  return make({.kind = ExprKind::kFusedMultiplyAdd, .dtype = DType::kFloat32,
               .operands = {std::move(a), std::move(b), std::move(c)}});
}

Expr in_accumulator(const Expr& e) {
  if (e->kind == ExprKind::kCall) throw std::logic_error("a call's precision is stated when it is built");
  ExprNode node = *e;
  node.precision = Precision::kAccumulator;
  return make(std::move(node));
}

bool is_index(const Expr& e, int64_t value) { return e->kind == ExprKind::kIndex && e->int_value == value; }

Expr add(const Expr& a, int64_t k) {
  if (k == 0) return a;
  if (is_index(a, 0)) return index(k);
  return k > 0 ? binary(BinaryOp::kAdd, a, index(k)) : binary(BinaryOp::kSub, a, index(-k));
}

Expr add(const Expr& a, const Expr& b) {
  if (is_index(a, 0)) return b;
  if (is_index(b, 0)) return a;
  return binary(BinaryOp::kAdd, a, b);
}

Expr mul(const Expr& a, int64_t k) {
  if (k == 0 || is_index(a, 0)) return index(0);
  if (k == 1) return a;
  return binary(BinaryOp::kMul, a, index(k));
}

Expr mul(const Expr& a, const Expr& b) {
  if (b->kind == ExprKind::kIndex) return mul(a, b->int_value);
  if (a->kind == ExprKind::kIndex) return mul(b, a->int_value);
  return binary(BinaryOp::kMul, a, b);
}

bool equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->hash != b->hash || a->kind != b->kind || a->dtype != b->dtype || a->precision != b->precision ||
      a->int_value != b->int_value ||
      a->name != b->name || a->binary != b->binary || a->operands.size() != b->operands.size())
    return false;
  // Bitwise, so that a NaN immediate equals itself and -0 differs from 0.
  if (std::bit_cast<uint64_t>(a->float_value) != std::bit_cast<uint64_t>(b->float_value)) return false;
  if (a->call.has_value() != b->call.has_value() || (a->call && !scalar_call_equal(*a->call, *b->call))) return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!equal(a->operands[i], b->operands[i])) return false;
  return true;
}

}  // namespace switchyard::kernel_ir
