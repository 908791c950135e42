// Dataflow patterns: constructors, matching and printing.
#include "transform/pattern.h"

#include <algorithm>
#include <sstream>

#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

// A node, with its fields set by `fill` before it is shared (immutable after).
template <typename Fill>
Pattern make_pattern(PatternKind kind, std::vector<Pattern> operands, Fill&& fill) {
  for (const Pattern& p : operands)
    if (!p) throw Error(ErrorKind::kUsage, "a pattern's operand is missing");
  auto* node = new PatternNode(kind, std::move(operands));
  Pattern p(node);
  fill(*node);
  return p;
}

Pattern make_pattern(PatternKind kind, std::vector<Pattern> operands = {}) {
  return make_pattern(kind, std::move(operands), [](PatternNode&) {});
}

// The operator a pattern constrains when it is a call of one operator.
const OpDef* called_op(const Pattern& p) {
  if (p->kind == PatternKind::kCall && p->operands[0]->kind == PatternKind::kOp)
    return find_op_def(p->operands[0]->name);
  if (p->kind == PatternKind::kAttr || p->kind == PatternKind::kType || p->kind == PatternKind::kPredicate)
    return called_op(p->operands[0]);
  return nullptr;
}

}  // namespace

Pattern wildcard() { return make_pattern(PatternKind::kWildcard); }

Pattern is_op(const std::string& op_name) {
  if (!find_op_def(op_name)) throw Error(ErrorKind::kUsage, "is_op: unknown operator '" + op_name + "'");
  return make_pattern(PatternKind::kOp, {}, [&](PatternNode& n) { n.name = op_name; });
}

Pattern is_op(const OpNode* op) { return is_op(op->name); }

Pattern is_call(Pattern callee, std::vector<Pattern> args) {
  args.insert(args.begin(), std::move(callee));
  return make_pattern(PatternKind::kCall, std::move(args));
}

Pattern is_constant() { return make_pattern(PatternKind::kConstant); }

Pattern is_constant_all(double value) {
  return make_pattern(PatternKind::kConstant, {}, [&](PatternNode& n) { n.value = value; });
}

Pattern is_scalar_constant(std::optional<double> value) {
  return make_pattern(PatternKind::kConstant, {}, [&](PatternNode& n) {
    n.value = value;
    n.scalar = true;
  });
}

Pattern is_var(std::string name) {
  return make_pattern(PatternKind::kVar, {}, [&](PatternNode& n) { n.name = std::move(name); });
}

Pattern is_tuple(std::vector<Pattern> fields) { return make_pattern(PatternKind::kTuple, std::move(fields)); }

Pattern is_tuple_get_item(Pattern tuple, int index) {
  return make_pattern(PatternKind::kTupleGetItem, {std::move(tuple)}, [&](PatternNode& n) { n.index = index; });
}

Pattern either(Pattern left, Pattern right) {
  return make_pattern(PatternKind::kAlternative, {std::move(left), std::move(right)});
}

Pattern has_attrs(Pattern inner, std::vector<std::pair<std::string, AttrValue>> attrs) {
  if (!inner) throw Error(ErrorKind::kUsage, "has_attr needs a pattern");
  if (const OpDef* def = called_op(inner)) {
    for (const auto& attr : attrs) {
      const std::string& name = attr.first;  // clang 14 cannot capture a structured binding
      bool known = std::any_of(def->attrs.begin(), def->attrs.end(), [&](const AttrSpec& s) { return s.name == name; });
      if (known) continue;
      std::string names;
      for (const AttrSpec& s : def->attrs) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(ErrorKind::kUsage, "has_attr: operator '" + def->name + "' has no attribute '" + name +
                                         "', so the pattern could never match (attributes: " +
                                         (names.empty() ? "none" : names) + ")");
    }
  }
  return make_pattern(PatternKind::kAttr, {std::move(inner)}, [&](PatternNode& n) { n.attrs = std::move(attrs); });
}

Pattern has_type(Pattern inner, std::optional<DType> dtype, std::optional<std::vector<int64_t>> shape) {
  return make_pattern(PatternKind::kType, {std::move(inner)}, [&](PatternNode& n) {
    n.dtype = dtype;
    n.shape = std::move(shape);
  });
}

Pattern satisfies(Pattern inner, std::string what, std::function<bool(const Expr&)> holds) {
  if (!holds) throw Error(ErrorKind::kUsage, "satisfies needs a condition");
  return make_pattern(PatternKind::kPredicate, {std::move(inner)}, [&](PatternNode& n) {
    n.name = std::move(what);
    n.holds = std::move(holds);
  });
}

namespace {

// The tensor type a node is known to have, or null.
TensorType known_tensor_type(const Expr& e) {
  if (const TensorTypeNode* t = as_tensor(e->checked_type())) return TensorType(t);
  if (const ConstantNode* c = as<ConstantNode>(e)) return c->tensor_type();
  const VarNode* v = as<VarNode>(e);
  if (const TensorTypeNode* t = v ? as_tensor(v->type_annotation) : nullptr) return TensorType(t);
  return TensorType();
}

// Numbers compare by value, so `1` asked of a float attribute matches 1.0;
// a scalar never matches a list.
std::optional<std::pair<bool, std::vector<double>>> as_numbers(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::pair{false, std::vector<double>{double(*i)}};
  if (auto* d = std::get_if<double>(&v)) return std::pair{false, std::vector<double>{*d}};
  if (auto* is = std::get_if<std::vector<int64_t>>(&v))
    return std::pair{true, std::vector<double>(is->begin(), is->end())};
  if (auto* ds = std::get_if<std::vector<double>>(&v)) return std::pair{true, *ds};
  return std::nullopt;
}

bool attr_matches(const AttrValue& want, const AttrValue& have) {
  if (attr_value_equal(want, have)) return true;
  auto a = as_numbers(want), b = as_numbers(have);
  return a && b && *a == *b;
}

const Attrs& attrs_of(const Expr& e) {
  static const Attrs none;
  if (const CallNode* c = as<CallNode>(e)) return c->attrs;
  if (const FunctionNode* f = as<FunctionNode>(e)) return f->attrs;
  return none;
}

bool constant_matches(const PatternNode& p, const Expr& e) {
  const ConstantNode* c = as<ConstantNode>(e);
  if (!c) return false;
  if (!p.scalar && !p.value) return true;
  if (!c->data.defined() || (p.scalar && (c->data.ndim() != 0 || c->data.numel() != 1))) return false;
  if (p.value)
    for (int64_t i = 0; i < c->data.numel(); ++i)
      if (c->data.get_as_double(i) != *p.value) return false;
  return true;
}

class Matcher {
 public:
  explicit Matcher(MatchMap& bindings) : bindings_(bindings) {}

  bool match(const Pattern& p, const Expr& e) {
    auto bound = bindings_.find(p.get());
    if (bound != bindings_.end()) return bound->second.same_as(e);
    if (!match_shape(p, e)) return false;
    bindings_.emplace(p.get(), e);
    return true;
  }

 private:
  bool match_all(const std::vector<Pattern>& ps, size_t first, const std::vector<Expr>& es) {
    if (ps.size() - first != es.size()) return false;
    for (size_t i = 0; i < es.size(); ++i)
      if (!match(ps[first + i], es[i])) return false;
    return true;
  }

  bool match_shape(const Pattern& p, const Expr& e) {
    switch (p->kind) {
      case PatternKind::kWildcard: return true;
      case PatternKind::kOp: {
        const OpNode* op = as<OpNode>(e);
        return op && op->name == p->name;
      }
      case PatternKind::kCall: {
        const CallNode* c = as<CallNode>(e);
        return c && match(p->operands[0], c->op) && match_all(p->operands, 1, c->args);
      }
      case PatternKind::kConstant: return constant_matches(*p, e);
      case PatternKind::kVar: {
        const VarNode* v = as<VarNode>(e);
        return v && (p->name.empty() || v->name_hint == p->name);
      }
      case PatternKind::kTuple: {
        const TupleNode* t = as<TupleNode>(e);
        return t && match_all(p->operands, 0, t->fields);
      }
      case PatternKind::kTupleGetItem: {
        const TupleGetItemNode* t = as<TupleGetItemNode>(e);
        return t && (p->index < 0 || t->index == p->index) && match(p->operands[0], t->tuple);
      }
      case PatternKind::kAlternative: {
        // The left side's partial bindings must not constrain the right side.
        MatchMap before = bindings_;
        if (match(p->operands[0], e)) return true;
        bindings_ = std::move(before);
        return match(p->operands[1], e);
      }
      case PatternKind::kAttr: {
        const Attrs& attrs = attrs_of(e);
        for (const auto& [name, want] : p->attrs) {
          const AttrValue* have = attrs ? attrs->find(name) : nullptr;
          if (!have || !attr_matches(want, *have)) return false;
        }
        return match(p->operands[0], e);
      }
      case PatternKind::kType: {
        TensorType t = known_tensor_type(e);
        // A symbolic type has no static shape to match (its `shape` is empty, a scalar's).
        bool shape_differs = t && p->shape && (!t->is_static() || t->shape != *p->shape);
        if (!t || (p->dtype && t->dtype != *p->dtype) || shape_differs) return false;
        return match(p->operands[0], e);
      }
      // The inner pattern first, so the condition sees the shape it describes.
      case PatternKind::kPredicate: return match(p->operands[0], e) && p->holds(e);
    }
    return false;
  }

  MatchMap& bindings_;
};

std::string joined(const std::vector<Pattern>& ps, size_t first) {
  std::string out;
  for (size_t i = first; i < ps.size(); ++i) out += (i > first ? ", " : "") + pattern_to_string(ps[i]);
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// 1, 2, 1e-05: the shortest form that reads back as the value.
std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string constant_to_string(const PatternNode& p) {
  if (p.scalar) return "is_scalar_constant(" + (p.value ? number_text(*p.value) : "") + ")";
  return p.value ? "is_constant_all(" + number_text(*p.value) + ")" : "is_constant()";
}

}  // namespace

bool match(const Pattern& p, const Expr& e, MatchMap* bindings) {
  if (!p || !e) return false;
  MatchMap local;
  MatchMap& out = bindings ? *bindings : local;
  out.clear();
  bool ok = Matcher(out).match(p, e);
  if (!ok) out.clear();
  return ok;
}

std::string pattern_to_string(const Pattern& p) {
  switch (p->kind) {
    case PatternKind::kWildcard: return "wildcard()";
    case PatternKind::kOp: return "is_op(\"" + p->name + "\")";
    case PatternKind::kCall: return pattern_to_string(p->operands[0]) + "(" + joined(p->operands, 1) + ")";
    case PatternKind::kConstant: return constant_to_string(*p);
    case PatternKind::kVar: return p->name.empty() ? "is_var()" : "is_var(\"" + p->name + "\")";
    case PatternKind::kTuple: return "is_tuple([" + joined(p->operands, 0) + "])";
    case PatternKind::kTupleGetItem:
      return "is_tuple_get_item(" + pattern_to_string(p->operands[0]) +
             (p->index < 0 ? "" : ", " + std::to_string(p->index)) + ")";
    case PatternKind::kAlternative:
      return "(" + pattern_to_string(p->operands[0]) + " | " + pattern_to_string(p->operands[1]) + ")";
    case PatternKind::kAttr: {
      std::string entries;
      for (const auto& [name, value] : p->attrs)
        entries += (entries.empty() ? "" : ", ") + ("\"" + name + "\": " + attr_value_to_string(value));
      return pattern_to_string(p->operands[0]) + ".has_attr({" + entries + "})";
    }
    case PatternKind::kType: {
      std::string out = pattern_to_string(p->operands[0]);
      if (p->dtype) out += ".has_dtype(\"" + std::string(dtype_name(*p->dtype)) + "\")";
      if (p->shape) out += ".has_shape(" + shape_text(*p->shape) + ")";
      return out;
    }
    case PatternKind::kPredicate: return pattern_to_string(p->operands[0]) + ".satisfies(\"" + p->name + "\")";
  }
  return "?";
}

}  // namespace switchyard
