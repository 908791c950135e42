// Typed reads of one attribute, for the family readers (op/*_attrs.cc) and
// nothing else: the families are where attribute names are spelt. The
// registry has normalized a call's attributes (normalize_attrs), so each
// read finds its kind; a read still accepts the near spellings a hand-built,
// not yet normalized call may hold (an int for a one-element list or for a
// number, an int for a boolean), as the interpreter always did, and throws
// Error(kType) naming the attribute otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace switchyard::attr_read {

// Absent: `fallback` (the registry's default); None counts as absent for the optional_ forms.
int64_t int_or(const AttrsNode& attrs, const char* name, int64_t fallback);
std::optional<int64_t> optional_int(const AttrsNode& attrs, const char* name);
double number_or(const AttrsNode& attrs, const char* name, double fallback);
bool bool_or(const AttrsNode& attrs, const char* name, bool fallback);
std::string string_or(const AttrsNode& attrs, const char* name, const std::string& fallback);
std::optional<std::vector<int64_t>> optional_ints(const AttrsNode& attrs, const char* name);

// Required attributes (no default): Error(kType) "attribute 'x' is missing" when absent or None.
int64_t required_int(const AttrsNode& attrs, const char* name);
double required_number(const AttrsNode& attrs, const char* name);
std::string required_string(const AttrsNode& attrs, const char* name);
std::vector<int64_t> required_ints(const AttrsNode& attrs, const char* name);
// The raw value (split's int-or-list); Error(kType) when absent.
const AttrValue& required_value(const AttrsNode& attrs, const char* name);

}  // namespace switchyard::attr_read
