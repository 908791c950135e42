// Attribute storage, comparison and hashing.
#include "ir/attrs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace switchyard {

namespace {
std::string float_text(double d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep it a float
  return s;
}
}  // namespace

std::string attr_value_to_string(const AttrValue& v) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return float_text(d); }
    std::string operator()(const std::string& s) const {
      std::string out = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') { out += "\\n"; continue; }
        out += c;
      }
      return out + "\"";
    }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + (*this)(l[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + std::to_string(l[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<double>& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + float_text(l[i]);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, v);
}

bool attr_value_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* da = std::get_if<double>(&a)) {  // bitwise, so NaN equals NaN
    double db = std::get<double>(b);
    return std::memcmp(da, &db, sizeof(double)) == 0;
  }
  return a == b;
}

size_t attr_value_hash(const AttrValue& v) {
  size_t h = v.index() * 0x9e3779b97f4a7c15ull;
  if (auto* b = std::get_if<bool>(&v)) return h ^ *b;
  if (auto* i = std::get_if<int64_t>(&v)) return h ^ std::hash<int64_t>()(*i);
  if (auto* d = std::get_if<double>(&v)) return h ^ std::hash<double>()(*d);
  if (auto* s = std::get_if<std::string>(&v)) return h ^ std::hash<std::string>()(*s);
  if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    for (int64_t x : *l) h = h * 31 + std::hash<int64_t>()(x);
    return h;
  }
  if (auto* l = std::get_if<std::vector<double>>(&v)) {
    for (double x : *l) h = h * 31 + std::hash<double>()(x);
    return h;
  }
  if (auto* l = std::get_if<std::vector<std::string>>(&v)) {
    for (const std::string& x : *l) h = h * 31 + std::hash<std::string>()(x);
    return h;
  }
  return h;
}

AttrsNode::AttrsNode(std::vector<std::pair<std::string, AttrValue>> entries) : entries_(std::move(entries)) {
  // The text form of an empty list is "[]", which reads back as ints.
  for (auto& [name, value] : entries_)
    if (auto* l = std::get_if<std::vector<std::string>>(&value); l && l->empty()) value = std::vector<int64_t>{};
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

const AttrValue* AttrsNode::find(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const auto& e, const std::string& n) { return e.first < n; });
  if (it == entries_.end() || it->first != name) return nullptr;
  return &it->second;
}

namespace {
template <typename T>
const T& get_typed(const AttrsNode& a, const std::string& name) {
  const AttrValue* v = a.find(name);
  if (!v) throw std::logic_error("attribute '" + name + "' is missing");
  const T* t = std::get_if<T>(v);
  if (!t) throw std::logic_error("attribute '" + name + "' has another type");
  return *t;
}
}  // namespace

int64_t AttrsNode::get_int(const std::string& n) const { return get_typed<int64_t>(*this, n); }
double AttrsNode::get_float(const std::string& n) const {
  const AttrValue* v = find(n);
  if (v)
    if (auto* i = std::get_if<int64_t>(v)) return double(*i);
  return get_typed<double>(*this, n);
}
bool AttrsNode::get_bool(const std::string& n) const { return get_typed<bool>(*this, n); }
const std::string& AttrsNode::get_string(const std::string& n) const {
  return get_typed<std::string>(*this, n);
}
const std::vector<int64_t>& AttrsNode::get_ints(const std::string& n) const {
  return get_typed<std::vector<int64_t>>(*this, n);
}
const std::vector<std::string>& AttrsNode::get_strings(const std::string& n) const {
  return get_typed<std::vector<std::string>>(*this, n);
}
bool AttrsNode::is_none(const std::string& n) const {
  const AttrValue* v = find(n);
  return !v || std::holds_alternative<std::monostate>(*v);
}

Attrs make_attrs(std::vector<std::pair<std::string, AttrValue>> entries) {
  return make_ref<AttrsNode>(std::move(entries));
}

Attrs attrs_with(const Attrs& attrs, const std::string& name, AttrValue value) {
  std::vector<std::pair<std::string, AttrValue>> entries;
  if (attrs)
    for (const auto& e : attrs->entries())
      if (e.first != name) entries.push_back(e);
  entries.emplace_back(name, std::move(value));
  return make_attrs(std::move(entries));
}

bool attrs_equal(const Attrs& a, const Attrs& b) {
  if (a.same_as(b)) return true;
  size_t na = a ? a->entries().size() : 0, nb = b ? b->entries().size() : 0;
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i) {
    const auto& ea = a->entries()[i];
    const auto& eb = b->entries()[i];
    if (ea.first != eb.first || !attr_value_equal(ea.second, eb.second)) return false;
  }
  return true;
}

size_t attrs_hash(const Attrs& a) {
  size_t h = 17;
  if (a)
    for (const auto& e : a->entries()) h = h * 31 + std::hash<std::string>()(e.first) + attr_value_hash(e.second);
  return h;
}

}  // namespace switchyard
