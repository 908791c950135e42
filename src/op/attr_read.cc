// Typed reads of one attribute (see attr_read.h).
#include "op/attr_read.h"

#include <stdexcept>

#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard::attr_read {

namespace {

[[noreturn]] void kind_fail(const char* name, const char* expected, const AttrValue& v) {
  throw Error(ErrorKind::kType, std::string("attribute '") + name + "' must be " + expected + ", got " +
                                    clipped_text(attr_value_to_string(v)));
}

bool is_none(const AttrValue& v) { return std::holds_alternative<std::monostate>(v); }

int64_t as_integer(const char* name, const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* list = std::get_if<std::vector<int64_t>>(&v); list && list->size() == 1) return (*list)[0];
  kind_fail(name, "an integer", v);
}

double as_number(const char* name, const AttrValue& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
  kind_fail(name, "a number", v);
}

bool as_boolean(const char* name, const AttrValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return *i != 0;
  kind_fail(name, "a boolean", v);
}

std::string as_string(const char* name, const AttrValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  kind_fail(name, "a string", v);
}

std::vector<int64_t> as_integers(const char* name, const AttrValue& v) {
  if (auto* list = std::get_if<std::vector<int64_t>>(&v)) return *list;
  if (auto* i = std::get_if<int64_t>(&v)) return {*i};
  if (auto* d = std::get_if<std::vector<double>>(&v); d && d->empty()) return {};
  kind_fail(name, "a list of integers", v);
}

// Present and not None.
const AttrValue& given(const AttrsNode& attrs, const char* name) {
  const AttrValue& v = value(attrs, name);
  if (is_none(v)) throw Error(ErrorKind::kType, std::string("attribute '") + name + "' must not be None");
  return v;
}

}  // namespace

const AttrValue& value(const AttrsNode& attrs, const char* name) {
  const AttrValue* v = attrs.find(name);
  if (!v) throw std::logic_error(std::string("attribute '") + name + "' is missing");
  return *v;
}

int64_t integer(const AttrsNode& attrs, const char* name) { return as_integer(name, given(attrs, name)); }
double number(const AttrsNode& attrs, const char* name) { return as_number(name, given(attrs, name)); }
bool boolean(const AttrsNode& attrs, const char* name) { return as_boolean(name, given(attrs, name)); }
std::string string(const AttrsNode& attrs, const char* name) { return as_string(name, given(attrs, name)); }
std::vector<int64_t> integers(const AttrsNode& attrs, const char* name) { return as_integers(name, given(attrs, name)); }

std::optional<int64_t> optional_integer(const AttrsNode& attrs, const char* name) {
  const AttrValue& v = value(attrs, name);
  return is_none(v) ? std::nullopt : std::optional<int64_t>(as_integer(name, v));
}

std::optional<std::vector<int64_t>> optional_integers(const AttrsNode& attrs, const char* name) {
  const AttrValue& v = value(attrs, name);
  return is_none(v) ? std::nullopt : std::optional<std::vector<int64_t>>(as_integers(name, v));
}

int64_t integer_or(const AttrsNode& attrs, const char* name, int64_t fallback) {
  return attrs.find(name) ? integer(attrs, name) : fallback;
}

std::optional<int64_t> optional_integer_or_none(const AttrsNode& attrs, const char* name) {
  return attrs.find(name) ? optional_integer(attrs, name) : std::nullopt;
}

double number_or(const AttrsNode& attrs, const char* name, double fallback) {
  return attrs.find(name) ? number(attrs, name) : fallback;
}

bool boolean_or(const AttrsNode& attrs, const char* name, bool fallback) {
  return attrs.find(name) ? boolean(attrs, name) : fallback;
}

std::string string_or(const AttrsNode& attrs, const char* name, const std::string& fallback) {
  return attrs.find(name) ? string(attrs, name) : fallback;
}

std::optional<std::vector<int64_t>> optional_integers_or_none(const AttrsNode& attrs, const char* name) {
  return attrs.find(name) ? optional_integers(attrs, name) : std::nullopt;
}

}  // namespace switchyard::attr_read
