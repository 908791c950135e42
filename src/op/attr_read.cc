// Typed reads of one attribute (see attr_read.h).
#include "op/attr_read.h"

#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard::attr_read {

namespace {

[[noreturn]] void kind_fail(const char* name, const char* expected, const AttrValue& v) {
  throw Error(ErrorKind::kType, std::string("attribute '") + name + "' must be " + expected + ", got " +
                                    clipped_text(attr_value_to_string(v)));
}

[[noreturn]] void missing(const char* name) {
  throw Error(ErrorKind::kType, std::string("attribute '") + name + "' is missing");
}

// The value, or null when absent or None.
const AttrValue* given(const AttrsNode& attrs, const char* name) {
  const AttrValue* v = attrs.find(name);
  return v && !std::holds_alternative<std::monostate>(*v) ? v : nullptr;
}

int64_t as_int(const char* name, const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* list = std::get_if<std::vector<int64_t>>(&v); list && list->size() == 1) return (*list)[0];
  kind_fail(name, "an integer", v);
}

double as_number(const char* name, const AttrValue& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
  kind_fail(name, "a number", v);
}

std::vector<int64_t> as_ints(const char* name, const AttrValue& v) {
  if (auto* list = std::get_if<std::vector<int64_t>>(&v)) return *list;
  if (auto* i = std::get_if<int64_t>(&v)) return {*i};
  if (auto* d = std::get_if<std::vector<double>>(&v); d && d->empty()) return {};
  kind_fail(name, "a list of integers", v);
}

std::string as_string(const char* name, const AttrValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  kind_fail(name, "a string", v);
}

}  // namespace

int64_t int_or(const AttrsNode& attrs, const char* name, int64_t fallback) {
  const AttrValue* v = given(attrs, name);
  return v ? as_int(name, *v) : fallback;
}

std::optional<int64_t> optional_int(const AttrsNode& attrs, const char* name) {
  const AttrValue* v = given(attrs, name);
  return v ? std::optional<int64_t>(as_int(name, *v)) : std::nullopt;
}

double number_or(const AttrsNode& attrs, const char* name, double fallback) {
  const AttrValue* v = given(attrs, name);
  return v ? as_number(name, *v) : fallback;
}

bool bool_or(const AttrsNode& attrs, const char* name, bool fallback) {
  const AttrValue* v = given(attrs, name);
  if (!v) return fallback;
  if (auto* b = std::get_if<bool>(v)) return *b;
  if (auto* i = std::get_if<int64_t>(v)) return *i != 0;
  kind_fail(name, "a boolean", *v);
}

std::string string_or(const AttrsNode& attrs, const char* name, const std::string& fallback) {
  const AttrValue* v = given(attrs, name);
  return v ? as_string(name, *v) : fallback;
}

std::optional<std::vector<int64_t>> optional_ints(const AttrsNode& attrs, const char* name) {
  const AttrValue* v = given(attrs, name);
  return v ? std::optional<std::vector<int64_t>>(as_ints(name, *v)) : std::nullopt;
}

int64_t required_int(const AttrsNode& attrs, const char* name) { return as_int(name, required_value(attrs, name)); }

double required_number(const AttrsNode& attrs, const char* name) {
  return as_number(name, required_value(attrs, name));
}

std::string required_string(const AttrsNode& attrs, const char* name) {
  return as_string(name, required_value(attrs, name));
}

std::vector<int64_t> required_ints(const AttrsNode& attrs, const char* name) {
  return as_ints(name, required_value(attrs, name));
}

const AttrValue& required_value(const AttrsNode& attrs, const char* name) {
  const AttrValue* v = given(attrs, name);
  if (!v) missing(name);
  return *v;
}

}  // namespace switchyard::attr_read
