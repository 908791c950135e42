// Type construction, interning, equality and printing.
#include "ir/type.h"

#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "runtime/clipped_text.h"
#include "runtime/tensor_size.h"
#include "support/error.h"

namespace switchyard {

int64_t TensorTypeNode::numel() const {
  if (!is_static())
    throw Error(ErrorKind::kType, "the size of " + clipped_text(type_to_string(TensorType(this))) +
                                      " depends on its symbolic dimensions");
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
  std::vector<DimExpr> dims = constant_dims(shape);
  TensorType t = make_ref<TensorTypeNode>(std::move(shape), std::move(dims), dtype);
  table->emplace(std::move(key), t);
  return t;
}

TensorType tensor_type_of_dims(std::vector<DimExpr> dims, DType dtype) {
  std::vector<int64_t> shape;
  for (const DimExpr& d : dims)
    if (std::optional<int64_t> value = d.constant()) shape.push_back(*value);
  if (shape.size() == dims.size()) return tensor_type(std::move(shape), dtype);
  std::string text = dims_to_string(dims);
  std::string type = "Tensor[" + clipped_text(text) + ", " + dtype_name(dtype) + "]";
  if (dims.size() > kMaxTensorRank)
    throw Error(ErrorKind::kType, "the tensor type " + type + " has " + std::to_string(dims.size()) +
                                      " dimensions; at most " + std::to_string(kMaxTensorRank) + " are supported");
  // At the bounds, where every variable has one, the size must fit as a static one's does.
  std::vector<int64_t> most;
  for (const DimExpr& d : dims)
    if (std::optional<int64_t> bound = d.upper_bound()) most.push_back(*bound);
  if (most.size() == dims.size() && !checked_nbytes(most, dtype))
    throw Error(ErrorKind::kType,
                "the tensor type " + type + " is too large at its bounds: its size in bytes overflows int64");
  // The text names every variable with its bound, so it identifies the type.
  static auto* table = new std::map<std::pair<std::string, DType>, TensorType>();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(std::move(text), dtype);
  auto it = table->find(key);
  if (it != table->end()) return it->second;
  TensorType t = make_ref<TensorTypeNode>(std::vector<int64_t>{}, std::move(dims), dtype);
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

namespace {

// The types a type is made of, in order: a tuple's fields; a function's
// parameters, then its result. Null past the last.
const TypeNode* type_child(const TypeNode* t, size_t i) {
  if (t->type_kind() == TypeKind::kTuple) {
    auto* tuple = static_cast<const TupleTypeNode*>(t);
    return i < tuple->fields.size() ? tuple->fields[i].get() : nullptr;
  }
  if (t->type_kind() == TypeKind::kFunc) {
    auto* func = static_cast<const FuncTypeNode*>(t);
    if (i < func->params.size()) return func->params[i].get();
    return i == func->params.size() ? func->ret.get() : nullptr;
  }
  return nullptr;
}

size_t type_child_count(const TypeNode* t) {
  if (t->type_kind() == TypeKind::kTuple) return static_cast<const TupleTypeNode*>(t)->fields.size();
  if (t->type_kind() == TypeKind::kFunc) return static_cast<const FuncTypeNode*>(t)->params.size() + 1;
  return 0;
}

// A type being walked and the index of its next child. The walks below keep
// their own stack: a type can be nested as deeply as the expressions that
// produced it (100,000 tuples in a tuple), far beyond the native stack.
struct TypeFrame {
  const TypeNode* type;
  size_t next = 0;
};

}  // namespace

std::optional<SymbolicDim> find_symbolic_dim(const Type& t) {
  std::vector<const TypeNode*> pending{t.get()};
  while (!pending.empty()) {
    const TypeNode* x = pending.back();
    pending.pop_back();
    if (!x) continue;
    if (x->type_kind() == TypeKind::kTensor) {
      auto* tt = static_cast<const TensorTypeNode*>(x);
      for (size_t i = 0; !tt->is_static() && i < tt->dims.size(); ++i)
        if (!tt->dims[i].is_constant()) return SymbolicDim{tt, i};
      continue;
    }
    // Pushed last child first, so the first in order is found first.
    for (size_t i = type_child_count(x); i > 0; --i) pending.push_back(type_child(x, i - 1));
  }
  return std::nullopt;
}

void refuse_symbolic_arguments(const std::string& op, const std::vector<Type>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::optional<SymbolicDim> found = find_symbolic_dim(args[i]);
    if (!found) continue;
    throw Error(ErrorKind::kType, "'" + op + "' does not take symbolic dimensions yet: argument " + std::to_string(i) +
                                      " is " + clipped_text(type_to_string(args[i])) + " (dimension " +
                                      std::to_string(found->index) + " is " +
                                      dim_to_string(found->tensor->dims[found->index]) + ")");
  }
}

bool type_equal(const Type& a, const Type& b) {
  std::vector<std::pair<const TypeNode*, const TypeNode*>> pending{{a.get(), b.get()}};
  while (!pending.empty()) {
    auto [x, y] = pending.back();
    pending.pop_back();
    if (x == y) continue;
    if (!x || !y || x->type_kind() != y->type_kind()) return false;
    if (x->type_kind() == TypeKind::kTensor) {
      auto* tx = static_cast<const TensorTypeNode*>(x);
      auto* ty = static_cast<const TensorTypeNode*>(y);
      if (tx->dtype != ty->dtype || tx->is_static() != ty->is_static()) return false;
      if (tx->is_static() ? tx->shape != ty->shape : tx->dims != ty->dims) return false;
      continue;
    }
    size_t count = type_child_count(x);
    if (count != type_child_count(y)) return false;
    for (size_t i = 0; i < count; ++i) pending.emplace_back(type_child(x, i), type_child(y, i));
  }
  return true;
}

size_t type_hash(const Type& t) {
  if (!t) return 0;
  // Post-order: a frame's hash is complete once its last child has been mixed in.
  struct Frame : TypeFrame {
    size_t hash;
  };
  auto start = [](const TypeNode* n) {
    if (n->type_kind() == TypeKind::kTensor) {
      auto* tt = static_cast<const TensorTypeNode*>(n);
      size_t h = size_t(tt->dtype) * 1000003u;
      if (tt->is_static()) {
        for (int64_t d : tt->shape) h = h * 31 + size_t(d);
      } else {
        h = h * 43 + std::hash<std::string>()(dims_to_string(tt->dims));
      }
      return Frame{{n}, h};
    }
    return Frame{{n}, n->type_kind() == TypeKind::kTuple ? size_t(7) : size_t(11)};
  };
  std::vector<Frame> stack{start(t.get())};
  while (true) {
    Frame& top = stack.back();
    if (const TypeNode* child = type_child(top.type, top.next)) {
      ++top.next;
      stack.push_back(start(child));
      continue;
    }
    size_t done = top.hash;
    stack.pop_back();
    if (stack.empty()) return done;
    stack.back().hash = stack.back().hash * (stack.back().type->type_kind() == TypeKind::kTuple ? 37 : 41) + done;
  }
}

std::string type_to_string(const Type& t) {
  if (!t) return "?";
  std::string s;
  std::vector<TypeFrame> stack{{t.get()}};
  while (!stack.empty()) {
    TypeFrame& top = stack.back();
    const TypeNode* n = top.type;
    if (n->type_kind() == TypeKind::kTensor) {
      auto* tt = static_cast<const TensorTypeNode*>(n);
      if (tt->dims.empty()) {
        s += dtype_name(tt->dtype);
      } else {
        s += "Tensor[" + dims_to_string(tt->dims) + ", " + dtype_name(tt->dtype) + "]";
      }
      stack.pop_back();
      continue;
    }
    bool tuple = n->type_kind() == TypeKind::kTuple;
    size_t count = type_child_count(n);
    size_t i = top.next++;
    if (i == 0) s += tuple ? "(" : "fn (";
    if (!tuple && i + 1 == count) {
      s += ") -> ";
    } else if (i > 0 && i < count) {
      s += ", ";
    }
    if (i < count) {
      stack.push_back({type_child(n, i)});
      continue;
    }
    if (tuple) s += count == 1 ? ",)" : ")";
    stack.pop_back();
  }
  return s;
}

int64_t type_nbytes(const Type& t) {
  int64_t n = 0;
  std::vector<const TypeNode*> pending{t.get()};
  while (!pending.empty()) {
    const TypeNode* x = pending.back();
    pending.pop_back();
    if (!x || x->type_kind() == TypeKind::kFunc) continue;  // a function holds no tensor data
    if (x->type_kind() == TypeKind::kTensor) {
      if (__builtin_add_overflow(n, static_cast<const TensorTypeNode*>(x)->nbytes(), &n))
        return std::numeric_limits<int64_t>::max();
      continue;
    }
    for (const Type& f : static_cast<const TupleTypeNode*>(x)->fields) pending.push_back(f.get());
  }
  return n;
}

}  // namespace switchyard
