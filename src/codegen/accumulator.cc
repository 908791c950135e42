// Starting, stepping and finishing sums, products and maxima in kernel IR.
#include "codegen/accumulator.h"

#include <limits>

namespace switchyard {

namespace ki = kernel_ir;
using ki::BinaryOp;

ki::Expr sum_start(DType dtype) {
  return ki::in_accumulator(dtype_is_float(dtype) ? ki::float_value(dtype, 0.0) : ki::int_value(dtype, 0));
}

ki::Expr product_start(DType dtype) {
  return ki::in_accumulator(dtype_is_float(dtype) ? ki::float_value(dtype, 1.0) : ki::int_value(dtype, 1));
}

ki::Expr widened(DType dtype, const ki::Expr& value) { return ki::in_accumulator(ki::cast(dtype, value)); }

ki::Expr finished_sum(DType dtype, const ki::Expr& acc) {
  // An integer sum's wrapped uint64 reads back as int64, then narrows.
  return ki::cast(dtype, dtype_is_float(dtype) ? acc : ki::cast(DType::kInt64, acc));
}

ki::Expr lowest_value(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return ki::int_value(dtype, std::numeric_limits<int8_t>::min());
    case DType::kInt16: return ki::int_value(dtype, std::numeric_limits<int16_t>::min());
    case DType::kInt32: return ki::int_value(dtype, std::numeric_limits<int32_t>::min());
    case DType::kInt64: return ki::int_value(dtype, std::numeric_limits<int64_t>::min());
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: case DType::kBool:
      return ki::int_value(dtype, 0);
    default: return ki::float_value(dtype, -std::numeric_limits<double>::infinity());
  }
}

ki::Expr max_step(const ki::Expr& best, const ki::Expr& value) {
  if (dtype_is_float(best->dtype))
    return ki::select(ki::binary(BinaryOp::kOr, ki::binary(BinaryOp::kNotEqual, best, best),
                                 ki::binary(BinaryOp::kLessEqual, value, best)),
                      best, value);
  return ki::select(ki::binary(BinaryOp::kGreater, value, best), value, best);
}

}  // namespace switchyard
