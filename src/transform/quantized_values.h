// Small readers shared by the passes that match the importer's spelling of
// quantize and dequantize (FuseQDQ, SimplifyQuantizeChains).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "ir/expr.h"
#include "ir/type.h"

namespace switchyard::quantized_values {

// `e` as a call of `op`, or null.
inline const CallNode* call_of(const Expr& e, const OpNode* op) {
  const CallNode* call = as<CallNode>(e);
  return call && as<OpNode>(call->op) == op ? call : nullptr;
}

// The element type of a tensor-typed `e` (bool for any other type).
inline DType dtype_of(const Expr& e) {
  const TensorTypeNode* t = as_tensor(e->checked_type());
  return t ? t->dtype : DType::kBool;
}

inline bool is_int8(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// The values an 8-bit integer type holds, {low, high}; uint8's for any
// other type (callers check is_int8 first).
inline std::pair<int64_t, int64_t> eight_bit_range(DType t) {
  return t == DType::kInt8 ? std::pair<int64_t, int64_t>{-128, 127} : std::pair<int64_t, int64_t>{0, 255};
}

// The value of a 0-d constant (or of a one-element one).
inline std::optional<double> scalar_constant(const Expr& e) {
  const ConstantNode* c = as<ConstantNode>(e);
  if (!c || c->data.numel() != 1) return std::nullopt;
  return c->data.get_as_double(0);
}

}  // namespace switchyard::quantized_values
