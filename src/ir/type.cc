// Type construction, interning, equality and printing.
#include "ir/type.h"

#include <limits>
#include <map>
#include <mutex>
#include <utility>

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
      if (tx->dtype != ty->dtype || tx->shape != ty->shape) return false;
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
      for (int64_t d : tt->shape) h = h * 31 + size_t(d);
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
      if (tt->shape.empty()) {
        s += dtype_name(tt->dtype);
      } else {
        s += "Tensor[(";
        for (size_t i = 0; i < tt->shape.size(); ++i) s += (i ? ", " : "") + std::to_string(tt->shape[i]);
        s += std::string("), ") + dtype_name(tt->dtype) + "]";
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
