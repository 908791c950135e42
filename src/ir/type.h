// Types: statically shaped tensors, tuples and functions. Immutable;
// TensorTypes are interned (equal shape and dtype give the same pointer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  TensorTypeNode(std::vector<int64_t> shape, DType dtype)
      : TypeNode(TypeKind::kTensor), shape(std::move(shape)), dtype(dtype) {}
  const std::vector<int64_t> shape;
  const DType dtype;
  int ndim() const { return int(shape.size()); }
  // Never overflow: tensor_type refuses shapes whose byte size does not fit in int64.
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
TensorType scalar_type(DType dtype);
Type tuple_type(std::vector<Type> fields);
Type func_type(std::vector<Type> params, Type ret);

// Null when `t` is not of that kind.
const TensorTypeNode* as_tensor(const Type& t);
const TupleTypeNode* as_tuple(const Type& t);
const FuncTypeNode* as_func(const Type& t);

bool type_equal(const Type& a, const Type& b);
size_t type_hash(const Type& t);
// Text form: "Tensor[(2, 4), float32]", "float32" for scalars, "(T, U)", "fn (T) -> U".
std::string type_to_string(const Type& t);
// Total bytes of all tensors in a (possibly tuple) type, saturating at INT64_MAX.
int64_t type_nbytes(const Type& t);

}  // namespace switchyard
