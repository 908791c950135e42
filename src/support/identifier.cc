#include "support/identifier.h"

namespace switchyard {

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string identifier_chars(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (!is_identifier_char(c)) c = '_';
  return out;
}

std::string c_identifier(std::string_view name, std::string_view prefix) {
  std::string out = identifier_chars(name);
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(0, prefix);
  return out;
}

}  // namespace switchyard
