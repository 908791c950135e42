// Type construction, interning, equality and printing.
#include "ir/type.h"

#include <limits>
#include <map>
#include <mutex>

#include "runtime/clipped_text.h"
#include "runtime/tensor_size.h"
#include "support/error.h"

namespace switchyard {

int64_t TensorTypeNode::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// "(4294967296, 4294967296)", clipped for a message.
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size() && text.size() <= kMostQuotedChars; ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return clipped_text(text + ")");
}

void check_tensor_size(const std::vector<int64_t>& shape, DType dtype) {
  std::string type = "Tensor[" + shape_text(shape) + ", " + dtype_name(dtype) + "]";
  if (shape.size() > kMaxTensorRank)
    throw Error(ErrorKind::kType, "the tensor type " + type + " has " + std::to_string(shape.size()) +
                                      " dimensions; at most " + std::to_string(kMaxTensorRank) + " are supported");
  for (int64_t d : shape)
    if (d < 0)
      throw Error(ErrorKind::kType, "the tensor type " + type + " has a negative dimension " + std::to_string(d));
  if (!checked_nbytes(shape, dtype))
    throw Error(ErrorKind::kType, "the tensor type " + type + " is too large: its size in bytes overflows int64");
}

}  // namespace

TensorType tensor_type(std::vector<int64_t> shape, DType dtype) {
  check_tensor_size(shape, dtype);
  // Interned forever: the number of distinct tensor types in a program is small.
  static auto* table = new std::map<std::pair<std::vector<int64_t>, DType>, TensorType>();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(shape, dtype);
  auto it = table->find(key);
  if (it != table->end()) return it->second;
  TensorType t = make_ref<TensorTypeNode>(std::move(shape), dtype);
  table->emplace(std::move(key), t);
  return t;
}

TensorType scalar_type(DType dtype) { return tensor_type({}, dtype); }

Type tuple_type(std::vector<Type> fields) { return make_ref<TupleTypeNode>(std::move(fields)); }

Type func_type(std::vector<Type> params, Type ret) {
  return make_ref<FuncTypeNode>(std::move(params), std::move(ret));
}

const TensorTypeNode* as_tensor(const Type& t) {
  return t && t->type_kind() == TypeKind::kTensor ? static_cast<const TensorTypeNode*>(t.get()) : nullptr;
}
const TupleTypeNode* as_tuple(const Type& t) {
  return t && t->type_kind() == TypeKind::kTuple ? static_cast<const TupleTypeNode*>(t.get()) : nullptr;
}
const FuncTypeNode* as_func(const Type& t) {
  return t && t->type_kind() == TypeKind::kFunc ? static_cast<const FuncTypeNode*>(t.get()) : nullptr;
}

bool type_equal(const Type& a, const Type& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a->type_kind() != b->type_kind()) return false;
  if (auto* ta = as_tensor(a)) {
    auto* tb = as_tensor(b);
    return ta->dtype == tb->dtype && ta->shape == tb->shape;
  }
  if (auto* ta = as_tuple(a)) {
    auto* tb = as_tuple(b);
    if (ta->fields.size() != tb->fields.size()) return false;
    for (size_t i = 0; i < ta->fields.size(); ++i)
      if (!type_equal(ta->fields[i], tb->fields[i])) return false;
    return true;
  }
  auto* fa = as_func(a);
  auto* fb = as_func(b);
  if (fa->params.size() != fb->params.size() || !type_equal(fa->ret, fb->ret)) return false;
  for (size_t i = 0; i < fa->params.size(); ++i)
    if (!type_equal(fa->params[i], fb->params[i])) return false;
  return true;
}

size_t type_hash(const Type& t) {
  if (!t) return 0;
  if (auto* tt = as_tensor(t)) {
    size_t h = size_t(tt->dtype) * 1000003u;
    for (int64_t d : tt->shape) h = h * 31 + size_t(d);
    return h;
  }
  if (auto* tt = as_tuple(t)) {
    size_t h = 7;
    for (const Type& f : tt->fields) h = h * 37 + type_hash(f);
    return h;
  }
  auto* ft = as_func(t);
  size_t h = 11 + type_hash(ft->ret);
  for (const Type& p : ft->params) h = h * 41 + type_hash(p);
  return h;
}

std::string type_to_string(const Type& t) {
  if (!t) return "?";
  if (auto* tt = as_tensor(t)) {
    if (tt->shape.empty()) return dtype_name(tt->dtype);
    std::string s = "Tensor[(";
    for (size_t i = 0; i < tt->shape.size(); ++i) s += (i ? ", " : "") + std::to_string(tt->shape[i]);
    return s + "), " + dtype_name(tt->dtype) + "]";
  }
  if (auto* tt = as_tuple(t)) {
    std::string s = "(";
    for (size_t i = 0; i < tt->fields.size(); ++i) s += (i ? ", " : "") + type_to_string(tt->fields[i]);
    if (tt->fields.size() == 1) s += ",";
    return s + ")";
  }
  auto* ft = as_func(t);
  std::string s = "fn (";
  for (size_t i = 0; i < ft->params.size(); ++i) s += (i ? ", " : "") + type_to_string(ft->params[i]);
  return s + ") -> " + type_to_string(ft->ret);
}

int64_t type_nbytes(const Type& t) {
  if (auto* tt = as_tensor(t)) return tt->nbytes();
  if (auto* tt = as_tuple(t)) {
    int64_t n = 0;
    for (const Type& f : tt->fields)
      if (__builtin_add_overflow(n, type_nbytes(f), &n)) return std::numeric_limits<int64_t>::max();
    return n;
  }
  return 0;
}

}  // namespace switchyard
