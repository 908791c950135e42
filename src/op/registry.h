// The operator registry: for each operator its attributes (typed, with
// defaults and validation), its type relation, its fusion pattern and, for
// element-wise operators, its scalar meaning, which the interpreter and the
// CPU generator both evaluate. Other operators' kernels live in tables of
// their own (interp/, codegen/, targets/) keyed by operator, so this layer knows
// nothing of either.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/type.h"
#include "op/scalar_expr.h"

namespace switchyard {

// How an operator fuses (FuseOps) and how it is lowered.
enum class OpPattern : uint8_t {
  kElementwise,  // out[i] = f(in[i]) with identical shapes
  kBroadcast,    // element-wise with NumPy broadcasting
  kInjective,    // each output element reads one input element (reshape, transpose, ...)
  kReduction,    // sum, mean, max, prod
  kAnchor,       // has its own kernel (conv2d, dense, softmax, ...); element-wise tails fuse into it
  kOpaque,       // never fused (on_device, device_copy)
};
const char* op_pattern_name(OpPattern p);

// What an operator does with its input's elements, for the passes and back
// ends that treat data movement alike without naming operators.
enum class DataMovement : uint8_t {
  kNone,     // it computes (or moves data some other way: concatenate, take)
  kIndexed,  // each output element is the input element at an index computed from the output's (transpose, strided_slice, broadcast_to)
  kView,     // kIndexed, and the row-major bytes stay as they are: only the shape changes (reshape, squeeze, expand_dims)
};

enum class AttrKind : uint8_t {
  kInt,
  kFloat,     // accepts an int literal too
  kBool,
  kString,
  kInts,      // list of ints
  kIntOrInts, // an int or a list of ints (split's indices_or_sections)
  kDType,     // a dtype name string ("float32")
  kDevice,    // a device string ("cpu:0")
  kDims,      // a list of ints, or of strings each a dimension ("seq", "196*n", "16"): reshape's target
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  // monostate = no default: required unless `optional` (then None is allowed).
  AttrValue default_value;
  bool optional = false;
};

// Infers the result type from argument types. Throws Error(kType) whose
// message explains the mismatch (InferType adds the call's span).
using TypeRelation = std::function<Type(const std::vector<Type>& args, const AttrsNode& attrs)>;

// Extra validation of attribute values (ranges, lengths); throws Error(kType).
using AttrsCheck = std::function<void(const AttrsNode& attrs)>;

struct OpDef {
  std::string name;
  int num_inputs = 1;  // -1: any number
  std::vector<AttrSpec> attrs;
  TypeRelation type_relation;
  OpPattern pattern = OpPattern::kOpaque;
  AttrsCheck check_attrs;  // may be empty
  std::string doc;         // one line
  // Element-wise and broadcast operators: what one element computes. The
  // interpreter derives its kernel from it (unless one is written by hand,
  // as bias_add's along an axis) and generated code renders it.
  std::optional<ScalarMeaning> scalar;
  DataMovement movement = DataMovement::kNone;
  // Its relation reads `dims` and handles symbolic dimensions (ir/dim.h).
  // Every other relation reads `shape`, so it is never called with a
  // symbolic argument: call_type_relation refuses first.
  bool symbolic_shapes = false;
};

// The result type of a call: def's relation on the argument types, after
// refusing symbolic arguments (refuse_symbolic_arguments, Error(kType)) when
// the relation is not symbolic-aware. The one way relations are called.
inline Type call_type_relation(const OpDef& def, const std::vector<Type>& args, const AttrsNode& attrs) {
  if (!def.symbolic_shapes) refuse_symbolic_arguments(def.name, args);
  return def.type_relation(args, attrs);
}

// The data movement of the operator `call` calls; kNone for a call of a function.
DataMovement data_movement(const CallNode& call);

// Registers an operator; throws on duplicates. Built-ins are registered by
// register_builtin_ops (op/builtin.cc), run once on first registry use.
void register_builtin_ops();

const OpDef* register_op(OpDef def);
// Null when unknown.
const OpDef* find_op_def(const std::string& name);
std::vector<const OpDef*> all_op_defs();  // sorted by name

// The interned Op node; throws Error(kParse) "unknown operator 'x'" when unknown.
Op op_get(const std::string& name);

// Validates given attributes against the operator's spec and fills defaults.
// Throws Error(kType) naming the attribute on an unknown name, a wrong type, a
// missing required value or a failed check.
Attrs normalize_attrs(const OpDef& def, std::vector<std::pair<std::string, AttrValue>> given);

// A call of a registered operator with normalized attributes.
Call make_op_call(const std::string& op_name, std::vector<Expr> args,
                  std::vector<std::pair<std::string, AttrValue>> attrs = {}, NodeMeta meta = {});

// The same for an operator's handle (op/handles.h), as passes build calls.
Call make_op_call(const OpNode* op, std::vector<Expr> args, std::vector<std::pair<std::string, AttrValue>> attrs = {},
                  NodeMeta meta = {});

// Whether `e` is a call of the named operator; returns the call or null.
const CallNode* as_op_call(const Expr& e, const char* op_name);

}  // namespace switchyard
