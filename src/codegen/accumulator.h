// Accumulators of the loops that combine many elements into one, as kernel
// IR: the reductions (reduction.cc) and the plain-loop anchors
// (direct_anchor.cc) start, step and finish them alike. Float sums and
// products accumulate in double, integer ones wrap in uint64
// (Precision::kAccumulator), as the reference does; a maximum keeps NumPy's
// NaN rule.
#pragma once

#include "kernel_ir/expr.h"

namespace switchyard {

// 0 in the accumulator type of `dtype`: where a sum starts.
kernel_ir::Expr sum_start(DType dtype);
// 1 in the accumulator type of `dtype`: where a product starts.
kernel_ir::Expr product_start(DType dtype);
// `value`, a compute-typed `dtype`, in its accumulator type: what a product
// multiplies (and an integer sum adds).
kernel_ir::Expr widened(DType dtype, const kernel_ir::Expr& value);
// The sum `acc` of `dtype` elements, held in the accumulator type, in the
// compute type of `dtype` (float16 and bfloat16 round).
kernel_ir::Expr finished_sum(DType dtype, const kernel_ir::Expr& acc);

// The lowest value of `dtype` (-inf for floats): where a maximum starts.
kernel_ir::Expr lowest_value(DType dtype);
// The larger of `best` and `value`; for floats a NaN wins and stays.
kernel_ir::Expr max_step(const kernel_ir::Expr& best, const kernel_ir::Expr& value);

}  // namespace switchyard
