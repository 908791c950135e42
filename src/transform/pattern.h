// Dataflow patterns, as TVM's DFPattern: a small tree that describes a shape
// of expression (`is_op("nn.relu")(wildcard())`), matched against an
// expression node and its operands. Rewriting with patterns is
// transform/pattern_rewrite.h.
//
// Matching is consistent: one pattern node stands for one expression, so
// `add(x, x)` with the same wildcard `x` twice matches only an addition of a
// value to itself. Type constraints read a node's checked_type (a Constant's
// data, a Var's annotation before InferType); a node with no type matches
// no type constraint.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

enum class PatternKind : uint8_t {
  kWildcard,     // any expression
  kOp,           // the operator `name`
  kCall,         // a call: operands[0] the callee, the rest its arguments
  kConstant,     // a Constant (of rank 0 when `scalar`; every element `value` when set)
  kVar,          // a Var (named `name`, when not empty)
  kTuple,        // a Tuple of exactly `operands`
  kTupleGetItem, // element `index` (any when -1) of operands[0]
  kAlternative,  // operands[0], else operands[1]
  kAttr,         // operands[0] whose call or function attributes include `attrs`
  kType,         // operands[0] whose tensor type has `dtype` and/or `shape`
  kPredicate,    // operands[0] for which `holds` is true; `name` says what it checks
};

class PatternNode;
using Pattern = Ref<PatternNode>;

class PatternNode : public Object {
 public:
  PatternNode(PatternKind kind, std::vector<Pattern> operands) : kind(kind), operands(std::move(operands)) {}
  const PatternKind kind;
  const std::vector<Pattern> operands;
  // Set once by the constructor functions below; which apply depends on kind.
  std::string name;
  int index = -1;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> shape;
  std::optional<double> value;
  bool scalar = false;
  std::function<bool(const Expr&)> holds;
};

// Constructors. An unknown operator name is Error(kUsage) with close matches;
// an attribute the constrained operator does not have is Error(kUsage) too,
// since the pattern could then never match.
Pattern wildcard();
Pattern is_op(const std::string& op_name);
Pattern is_op(const OpNode* op);  // by handle (op/handles.h), as the built-in rules match
Pattern is_call(Pattern callee, std::vector<Pattern> args);
Pattern is_constant();
// A Constant whose every element equals `value`, of any shape ({1, 1, 1} is
// a one): what an identity such as x*1 needs to know of its operand.
Pattern is_constant_all(double value);
// A rank-0 Constant, equal to `value` when given.
Pattern is_scalar_constant(std::optional<double> value = std::nullopt);
Pattern is_var(std::string name = "");
Pattern is_tuple(std::vector<Pattern> fields);
Pattern is_tuple_get_item(Pattern tuple, int index = -1);
Pattern either(Pattern left, Pattern right);
Pattern has_attrs(Pattern inner, std::vector<std::pair<std::string, AttrValue>> attrs);
Pattern has_type(Pattern inner, std::optional<DType> dtype, std::optional<std::vector<int64_t>> shape);
// `inner`, where `holds` is true of the matched expression: for what depends
// on the match itself ("over the last axis" reads the operand's rank).
// `what` names the condition when the pattern is printed.
Pattern satisfies(Pattern inner, std::string what, std::function<bool(const Expr&)> holds);

// The expression each pattern node matched.
using MatchMap = std::unordered_map<const PatternNode*, Expr>;

// Whether `e` matches `p`; on success `bindings` (when given) holds what every
// pattern node of the match stands for.
bool match(const Pattern& p, const Expr& e, MatchMap* bindings = nullptr);

// `is_op("nn.relu")(wildcard())`: the pattern as its Python spelling.
std::string pattern_to_string(const Pattern& p);

}  // namespace switchyard
