// Operator registry storage, attribute normalization and Op interning.
#include "op/registry.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "ir/dim.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<OpDef>> defs;
  std::map<std::string, Op> ops;
};

Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

// Built-in operators are registered on first use, explicitly rather than by
// static initialisers (which a static library link may drop).
void ensure_builtin_ops() {
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_ops(); });
}

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt: return "an integer";
    case AttrKind::kFloat: return "a number";
    case AttrKind::kBool: return "a boolean";
    case AttrKind::kString: return "a string";
    case AttrKind::kInts: return "a list of integers";
    case AttrKind::kIntOrInts: return "an integer or a list of integers";
    case AttrKind::kDType: return "a dtype string";
    case AttrKind::kDevice: return "a device string";
    case AttrKind::kDims: return "a list of integers or dimension strings";
  }
  return "?";
}

// A list of dimensions in one canonical form: ints when every entry is a
// constant (so a symbolic target that specialisation made static is the
// static attribute), else each entry's canonical text ("batch*seq", never
// "seq*batch").
std::optional<AttrValue> coerce_dims(const AttrSpec& spec, const AttrValue& v) {
  if (std::holds_alternative<std::vector<int64_t>>(v)) return v;
  if (auto* d = std::get_if<std::vector<double>>(&v); d && d->empty()) return AttrValue(std::vector<int64_t>{});
  auto* texts = std::get_if<std::vector<std::string>>(&v);
  if (!texts) return std::nullopt;
  std::vector<DimExpr> dims;
  for (const std::string& text : *texts) {
    try {
      dims.push_back(parse_dim(text));
    } catch (const Error& e) {
      throw Error(ErrorKind::kType, "attribute '" + spec.name + "': " + e.message());
    }
  }
  if (std::all_of(dims.begin(), dims.end(), [](const DimExpr& d) { return d.is_constant(); })) {
    std::vector<int64_t> values;
    for (const DimExpr& d : dims) values.push_back(d.coefficient());
    return AttrValue(std::move(values));
  }
  std::vector<std::string> canonical;
  for (const DimExpr& d : dims) canonical.push_back(dim_to_string(d));
  return AttrValue(std::move(canonical));
}

// Converts `v` to the spec's kind where that is lossless; nullopt on mismatch.
std::optional<AttrValue> coerce(const AttrSpec& spec, const AttrValue& v) {
  if (std::holds_alternative<std::monostate>(v)) {
    if (spec.optional) return v;
    return std::nullopt;
  }
  switch (spec.kind) {
    case AttrKind::kInt:
      if (std::holds_alternative<int64_t>(v)) return v;
      return std::nullopt;
    case AttrKind::kFloat:
      if (auto* i = std::get_if<int64_t>(&v)) return AttrValue(double(*i));
      if (std::holds_alternative<double>(v)) return v;
      return std::nullopt;
    case AttrKind::kBool:
      if (std::holds_alternative<bool>(v)) return v;
      if (auto* i = std::get_if<int64_t>(&v); i && (*i == 0 || *i == 1)) return AttrValue(*i == 1);
      return std::nullopt;
    case AttrKind::kString:
      if (std::holds_alternative<std::string>(v)) return v;
      return std::nullopt;
    case AttrKind::kInts:
      if (std::holds_alternative<std::vector<int64_t>>(v)) return v;
      if (auto* d = std::get_if<std::vector<double>>(&v); d && d->empty()) return AttrValue(std::vector<int64_t>{});
      return std::nullopt;
    case AttrKind::kIntOrInts:
      if (std::holds_alternative<int64_t>(v) || std::holds_alternative<std::vector<int64_t>>(v)) return v;
      return std::nullopt;
    case AttrKind::kDType: {
      auto* s = std::get_if<std::string>(&v);
      if (!s) return std::nullopt;
      if (!parse_dtype(*s))
        throw Error(ErrorKind::kType, "attribute '" + spec.name + "': unknown dtype \"" + clipped_text(*s) + "\"");
      return v;
    }
    case AttrKind::kDevice: {
      auto* s = std::get_if<std::string>(&v);
      if (!s) return std::nullopt;
      try {
        VirtualDevice::parse(*s);
      } catch (const Error& e) {
        throw Error(ErrorKind::kType, "attribute '" + spec.name + "': " + e.message());
      }
      return v;
    }
    case AttrKind::kDims: return coerce_dims(spec, v);
  }
  return std::nullopt;
}

}  // namespace

const char* op_pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::kElementwise: return "elementwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kReduction: return "reduction";
    case OpPattern::kAnchor: return "anchor";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

const OpDef* register_op(OpDef def) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string name = def.name;
  if (r.defs.count(name)) throw std::logic_error("operator registered twice: " + name);
  auto owned = std::make_unique<OpDef>(std::move(def));
  const OpDef* p = owned.get();
  r.defs.emplace(name, std::move(owned));
  r.ops.emplace(name, make_ref<OpNode>(name, p));
  return p;
}

const OpDef* find_op_def(const std::string& name) {
  ensure_builtin_ops();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.defs.find(name);
  return it == r.defs.end() ? nullptr : it->second.get();
}

DataMovement data_movement(const CallNode& call) {
  const OpNode* op = as<OpNode>(call.op);
  return op && op->def ? op->def->movement : DataMovement::kNone;
}

std::vector<const OpDef*> all_op_defs() {
  ensure_builtin_ops();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const OpDef*> out;
  for (auto& [n, d] : r.defs) out.push_back(d.get());
  return out;
}

Op op_get(const std::string& name) {
  ensure_builtin_ops();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find(name);
  if (it == r.ops.end()) throw Error(ErrorKind::kParse, "unknown operator '" + name + "'");
  return it->second;
}

Attrs normalize_attrs(const OpDef& def, std::vector<std::pair<std::string, AttrValue>> given) {
  std::vector<std::pair<std::string, AttrValue>> out;
  for (const auto& g : given) {
    bool known = std::any_of(def.attrs.begin(), def.attrs.end(), [&](const AttrSpec& s) { return s.name == g.first; });
    if (!known) {
      std::string names;
      for (const AttrSpec& s : def.attrs) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(ErrorKind::kType, "operator '" + def.name + "' has no attribute '" + g.first + "'" +
                                        (names.empty() ? " (it takes none)" : " (it takes: " + names + ")"));
    }
    int count = 0;
    for (const auto& h : given) count += h.first == g.first;
    if (count > 1) throw Error(ErrorKind::kType, "attribute '" + g.first + "' given twice");
  }
  for (const AttrSpec& spec : def.attrs) {
    const AttrValue* value = nullptr;
    for (const auto& g : given)
      if (g.first == spec.name) value = &g.second;
    if (!value) {
      if (std::holds_alternative<std::monostate>(spec.default_value) && !spec.optional)
        throw Error(ErrorKind::kType,
                    "operator '" + def.name + "' requires attribute '" + spec.name + "' (" + attr_kind_name(spec.kind) + ")");
      out.emplace_back(spec.name, spec.default_value);
      continue;
    }
    std::optional<AttrValue> v = coerce(spec, *value);
    if (!v)
      throw Error(ErrorKind::kType, "attribute '" + spec.name + "' of '" + def.name + "' must be " +
                                        attr_kind_name(spec.kind) + ", got " +
                                        clipped_text(attr_value_to_string(*value)));
    out.emplace_back(spec.name, std::move(*v));
  }
  Attrs attrs = make_attrs(std::move(out));
  if (def.check_attrs) def.check_attrs(*attrs);
  return attrs;
}

Call make_op_call(const std::string& op_name, std::vector<Expr> args,
                  std::vector<std::pair<std::string, AttrValue>> attrs, NodeMeta meta) {
  Op op = op_get(op_name);
  return make_call(op, std::move(args), normalize_attrs(*op->def, std::move(attrs)), std::move(meta));
}

Call make_op_call(const OpNode* op, std::vector<Expr> args, std::vector<std::pair<std::string, AttrValue>> attrs,
                  NodeMeta meta) {
  return make_call(Op(op), std::move(args), normalize_attrs(*op->def, std::move(attrs)), std::move(meta));
}

const CallNode* as_op_call(const Expr& e, const char* op_name) {
  const CallNode* c = as<CallNode>(e);
  if (!c) return nullptr;
  const OpNode* op = as<OpNode>(c->op);
  return op && op->name == op_name ? c : nullptr;
}

}  // namespace switchyard
