// Element indices of generated loops, as kernel IR: which element of
// a tensor an output element reads, through broadcasting and the injective
// operators (reshape, expand_dims, squeeze, transpose, strided_slice,
// bias_add's bias). Code generation inlines producers by evaluating them at
// these indices instead of materialising intermediate tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"
#include "kernel_ir/expr.h"

namespace switchyard {

// The index maps over kernel IR index expressions. `divided` (may be null)
// is set when coordinates had to be recovered from an offset by division
// (cheap loops avoid that; see the element-wise generator).
struct IndexAt {
  kernel_ir::Expr offset;               // null when only coordinates are known
  std::vector<kernel_ir::Expr> coords;  // valid when has_coords
  bool has_coords = false;

  static IndexAt at_offset(kernel_ir::Expr offset);
  static IndexAt at_coords(std::vector<kernel_ir::Expr> coords);
  static IndexAt at(kernel_ir::Expr offset, std::vector<kernel_ir::Expr> coords);
  bool operator==(const IndexAt& other) const;
  size_t hash() const;
};

kernel_ir::Expr offset_of(const IndexAt& index, const std::vector<int64_t>& shape);
std::vector<kernel_ir::Expr> coordinates_of(const IndexAt& index, const std::vector<int64_t>& shape, bool* divided);
IndexAt broadcast_index(const IndexAt& index, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& operand_shape, bool* divided);
IndexAt argument_index(const CallNode& call, size_t arg, const IndexAt& index, bool* divided);

// The shape of a (tensor-typed) expression.
const std::vector<int64_t>& shape_of(const Expr& e);
DType dtype_of(const Expr& e);

}  // namespace switchyard
