// Attributes of operator calls and functions: an immutable, name-sorted list
// of typed values. Operator attributes are validated and completed with
// defaults by the operator registry (op/registry.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "support/ref.h"

namespace switchyard {

// None, bool, int, float, string, list of ints, list of floats, list of
// strings (a function's output names). An empty list is a list of ints.
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::string,
                               std::vector<int64_t>, std::vector<double>, std::vector<std::string>>;

std::string attr_value_to_string(const AttrValue& v);  // text-IR form: 1, 2f... see printer
bool attr_value_equal(const AttrValue& a, const AttrValue& b);
size_t attr_value_hash(const AttrValue& v);

class AttrsNode : public Object {
 public:
  explicit AttrsNode(std::vector<std::pair<std::string, AttrValue>> entries);  // sorts by name
  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }
  const AttrValue* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }

  // Typed accessors; throw std::logic_error when absent or of another type
  // (the registry guarantees presence and type for operator attributes).
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;  // accepts ints too
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<std::string>& get_strings(const std::string& name) const;
  bool is_none(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, AttrValue>> entries_;
};
using Attrs = Ref<AttrsNode>;

Attrs make_attrs(std::vector<std::pair<std::string, AttrValue>> entries);
// A copy with one entry set (added or replaced).
Attrs attrs_with(const Attrs& attrs, const std::string& name, AttrValue value);
bool attrs_equal(const Attrs& a, const Attrs& b);  // null equals empty
size_t attrs_hash(const Attrs& a);

}  // namespace switchyard
