// Typed reads of one attribute, for the family readers (op/*_attrs.cc) and
// nothing else: the families are where attribute names are spelt.
//
// The registry normalizes a call's attributes (normalize_attrs: every
// attribute of the operator present, of its kind, defaults filled in), so
// a plain read finds its attribute; one that does not is a call built
// around the registry, and throws std::logic_error, as AttrsNode's getters
// do. A read still accepts the near spellings a hand-built call may hold (an
// int for a one-element list or for a number, an int for a boolean), as the
// interpreter always did, and throws Error(kType) naming the attribute for
// any other kind. The `_or` reads are for a family's fields that some of
// its operators do not have (softmax's epsilon): absent gives the fallback.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace switchyard::attr_read {

// Present (maybe None: the optional_ forms give nullopt).
const AttrValue& value(const AttrsNode& attrs, const char* name);
int64_t integer(const AttrsNode& attrs, const char* name);
std::optional<int64_t> optional_integer(const AttrsNode& attrs, const char* name);
double number(const AttrsNode& attrs, const char* name);
bool boolean(const AttrsNode& attrs, const char* name);
std::string string(const AttrsNode& attrs, const char* name);
std::vector<int64_t> integers(const AttrsNode& attrs, const char* name);
std::optional<std::vector<int64_t>> optional_integers(const AttrsNode& attrs, const char* name);

// Absent: the fallback (nullopt for the optional_ forms, as None).
int64_t integer_or(const AttrsNode& attrs, const char* name, int64_t fallback);
std::optional<int64_t> optional_integer_or_none(const AttrsNode& attrs, const char* name);
double number_or(const AttrsNode& attrs, const char* name, double fallback);
bool boolean_or(const AttrsNode& attrs, const char* name, bool fallback);
std::string string_or(const AttrsNode& attrs, const char* name, const std::string& fallback);
std::optional<std::vector<int64_t>> optional_integers_or_none(const AttrsNode& attrs, const char* name);

}  // namespace switchyard::attr_read
