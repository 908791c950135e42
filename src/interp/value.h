// Values of the reference interpreter: a tensor (with the virtual device it
// lives on), a tuple of values, or a closure (a function and the values of
// its free variables).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "runtime/ndarray.h"
#include "support/shared_fields.h"

namespace switchyard {

struct Closure;
struct Value;

// A tuple value's fields: shared, so copying a tuple (into a let, out of a
// projection) is O(1) and deep nesting costs linear memory.
using TupleFields = SharedFields<Value>;

struct Value {
  enum class Kind : uint8_t { kTensor, kTuple, kClosure };

  Kind kind = Kind::kTensor;
  NDArray tensor;                                                // kTensor
  const VirtualDevice* device = VirtualDevice::unconstrained();  // kTensor: where it lives
  TupleFields fields;                                            // kTuple
  std::shared_ptr<const Closure> closure;                        // kClosure

  static Value make_tensor(NDArray data, const VirtualDevice* device);
  static Value make_tuple(std::vector<Value> fields);
  static Value make_closure(Function function, std::unordered_map<const VarNode*, Value> captured);

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_tuple() const { return kind == Kind::kTuple; }
  bool is_closure() const { return kind == Kind::kClosure; }
};

// A function value. Only the function's free variables are captured, so a
// closure never holds the activation that made it (no reference cycles).
struct Closure {
  Function function;
  std::unordered_map<const VarNode*, Value> captured;
};

// The same value with every tensor in it relabelled to `device`.
Value relabel_value(const Value& value, const VirtualDevice* device);

// The tensors of a value in order, tuples flattened depth-first; each keeps
// its device. Throws Error(kUsage) when the value holds a closure.
std::vector<Value> flatten_tensors(const Value& value);

// The arrays of flatten_tensors.
std::vector<NDArray> flatten_value(const Value& value);

// "Tensor[(2, 3), float32] on cpu:0" ("on ?" when unconstrained), "(..., ...)",
// "closure of 2 parameters".
std::string value_summary(const Value& value);

}  // namespace switchyard
