// Names made identifiers: the one rule for turning an IR name (a variable's
// hint, an operator such as "nn.dense") into a C/C++ symbol or a text-IR name.
#pragma once

#include <string>
#include <string_view>

namespace switchyard {

// A letter, digit or '_' (ASCII; the result does not depend on the locale).
bool is_identifier_char(char c);

// `name` with every other character replaced by '_': "nn.dense" -> "nn_dense".
std::string identifier_chars(std::string_view name);

// identifier_chars(name), with `prefix` in front when that is empty or
// starts with a digit, so the result is a valid C identifier: ("3x", "v") -> "v3x".
std::string c_identifier(std::string_view name, std::string_view prefix);

}  // namespace switchyard
