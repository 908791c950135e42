// Element indices of generated loops, as C++ expressions: which element of
// a tensor an output element reads, through broadcasting and the injective
// operators (reshape, expand_dims, squeeze, transpose, strided_slice,
// bias_add's bias). Code generation inlines producers by evaluating them at
// these indices instead of materialising intermediate tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "kernel_ir/expr.h"

namespace switchyard {

// An element of a tensor: a row-major offset expression, one coordinate
// expression per dimension, or both (when a loop knows both cheaply).
struct ElementIndex {
  std::string offset;               // "" when only coordinates are known
  std::vector<std::string> coords;  // valid when has_coords
  bool has_coords = false;

  static ElementIndex at_offset(std::string offset);
  static ElementIndex at_coords(std::vector<std::string> coords);
  static ElementIndex at(std::string offset, std::vector<std::string> coords);
  // Identifies the index (for reusing a value computed at the same element).
  std::string key() const;
};

// Tracks whether coordinates had to be recovered from an offset by division
// (cheap loops avoid that; see the element-wise generator).
struct IndexCost {
  bool divided = false;
};

// `e` wrapped in parentheses unless it is a name or a number.
std::string parenthesize(const std::string& e);
// "e + k", "e * k", simplified for 0 and 1.
std::string plus(const std::string& e, int64_t k);
std::string times(const std::string& e, int64_t k);

// The row-major offset of `index` in a tensor of `shape`.
std::string offset_of(const ElementIndex& index, const std::vector<int64_t>& shape);
// The coordinates of `index` in a tensor of `shape`.
std::vector<std::string> coordinates_of(const ElementIndex& index, const std::vector<int64_t>& shape,
                                        IndexCost* cost);

// The element of an operand of `operand_shape` that NumPy broadcasting to
// `shape` reads for `index`.
ElementIndex broadcast_index(const ElementIndex& index, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& operand_shape, IndexCost* cost);

// For a call of an element-wise, broadcast or injective operator (not
// concatenate, take or split, whose reads depend on more than the index):
// the element of argument `arg` that output element `index` reads.
ElementIndex argument_index(const CallNode& call, size_t arg, const ElementIndex& index, IndexCost* cost);

// The index maps themselves, over kernel IR index expressions, for the
// generators that build kernel IR; the text forms above run these
// (cpu_index_text.cc). `divided` (may be null) is set when coordinates had
// to be recovered from an offset by division.
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
