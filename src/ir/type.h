// Types: tensors, tuples and functions. Immutable; TensorTypes are interned
// (equal dimensions and dtype give the same pointer). A tensor type is static
// (every dimension a constant, in `shape`) or symbolic (some dimension an
// expression over named variables, ir/dim.h; `shape` then empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dim.h"
#include "runtime/dtype.h"
#include "support/ref.h"

namespace switchyard {

enum class TypeKind : uint8_t { kTensor, kTuple, kFunc };

class TypeNode : public Object {
 public:
  explicit TypeNode(TypeKind kind) : kind_(kind) {}
  TypeKind type_kind() const { return kind_; }

 private:
  TypeKind kind_;
};
using Type = Ref<TypeNode>;

class TensorTypeNode : public TypeNode {
 public:
  TensorTypeNode(std::vector<int64_t> shape, std::vector<DimExpr> dims, DType dtype)
      : TypeNode(TypeKind::kTensor), shape(std::move(shape)), dims(std::move(dims)), dtype(dtype) {}
  // The sizes of a static type; EMPTY for a symbolic one, so only code that
  // checked is_static() may read it. Operator relations not marked
  // symbolic-aware, passes not marked so and lowering never see a symbolic
  // type (op/registry.h, transform/pass.h, ir/symbolic_use.h), which is what
  // keeps the many readers of `shape` correct.
  const std::vector<int64_t> shape;
  // One expression per dimension, for every type (constants for a static one).
  const std::vector<DimExpr> dims;
  const DType dtype;
  bool is_static() const { return shape.size() == dims.size(); }
  int ndim() const { return int(dims.size()); }
  // Never overflow: tensor_type refuses shapes whose byte size does not fit
  // in int64. Error(kType) for a symbolic type, whose size is not known.
  int64_t numel() const;
  int64_t nbytes() const { return numel() * dtype_bytes(dtype); }
};
using TensorType = Ref<TensorTypeNode>;

class TupleTypeNode : public TypeNode {
 public:
  explicit TupleTypeNode(std::vector<Type> fields) : TypeNode(TypeKind::kTuple), fields(std::move(fields)) {}
  const std::vector<Type> fields;
};
using TupleType = Ref<TupleTypeNode>;

class FuncTypeNode : public TypeNode {
 public:
  FuncTypeNode(std::vector<Type> params, Type ret)
      : TypeNode(TypeKind::kFunc), params(std::move(params)), ret(std::move(ret)) {}
  const std::vector<Type> params;
  const Type ret;
};
using FuncType = Ref<FuncTypeNode>;

// The most dimensions a tensor type may have (NumPy's limit): a bound on
// what one attribute, such as expand_dims's num_newaxis, can make the
// compiler allocate.
constexpr size_t kMaxTensorRank = 64;

// Interned tensor type. Error(kType) naming the type when a dimension is
// negative, the rank exceeds kMaxTensorRank, or the size in bytes does not
// fit in int64.
TensorType tensor_type(std::vector<int64_t> shape, DType dtype);
// A tensor type from dimension expressions: a static type when every one is a
// constant, else a symbolic type. Error(kType) as tensor_type's, and when a
// dimension's upper bound is known and the bytes at the bounds overflow.
TensorType tensor_type_of_dims(std::vector<DimExpr> dims, DType dtype);
TensorType scalar_type(DType dtype);
Type tuple_type(std::vector<Type> fields);
Type func_type(std::vector<Type> params, Type ret);

// Null when `t` is not of that kind.
const TensorTypeNode* as_tensor(const Type& t);
const TupleTypeNode* as_tuple(const Type& t);
const FuncTypeNode* as_func(const Type& t);

// The first symbolic dimension in `t` (a tuple's fields in order, a
// function's parameters then result): the tensor type holding it and its
// index; nullopt when every tensor in `t` is static.
struct SymbolicDim {
  const TensorTypeNode* tensor;
  size_t index;
};
std::optional<SymbolicDim> find_symbolic_dim(const Type& t);
// Error(kType) "'op' does not take symbolic dimensions yet: argument I is T
// (dimension D is n)" when an argument type holds a symbolic dimension: what
// InferType says for an operator whose relation is not symbolic-aware.
void refuse_symbolic_arguments(const std::string& op, const std::vector<Type>& args);

bool type_equal(const Type& a, const Type& b);
size_t type_hash(const Type& t);
// Text form: "Tensor[(2, 4), float32]", "Tensor[(n<=64, 4), float32]",
// "float32" for scalars, "(T, U)", "fn (T) -> U".
std::string type_to_string(const Type& t);
// Total bytes of all tensors in a (possibly tuple) type, saturating at INT64_MAX.
int64_t type_nbytes(const Type& t);

}  // namespace switchyard
