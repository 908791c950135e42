// Clipping quoted input for messages and making it valid UTF-8 (see clipped_text.h).
#include "runtime/clipped_text.h"

#include <cstdint>

namespace switchyard {

namespace {

// The length of the well-formed UTF-8 character at text[at], or 0 when the
// bytes there are not one (RFC 3629: no overlong forms, no surrogates,
// nothing beyond U+10FFFF), or are a NUL and `nul_is_invalid`.
size_t character_length(std::string_view text, size_t at, bool nul_is_invalid) {
  auto byte = [&](size_t i) { return at + i < text.size() ? uint8_t(text[at + i]) : uint8_t(0); };
  auto continuation = [&](size_t i, uint8_t low = 0x80, uint8_t high = 0xBF) {
    return at + i < text.size() && byte(i) >= low && byte(i) <= high;
  };
  uint8_t lead = byte(0);
  if (lead == 0) return nul_is_invalid ? 0 : 1;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    uint8_t low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    uint8_t low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

bool is_valid(std::string_view text, bool nul_is_invalid) {
  for (size_t at = 0; at < text.size();) {
    size_t length = character_length(text, at, nul_is_invalid);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

// `text` with every byte that does not start a character written "\xHH".
std::string escaped(std::string_view text, bool nul_is_invalid) {
  if (is_valid(text, nul_is_invalid)) return std::string(text);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t at = 0; at < text.size();) {
    size_t length = character_length(text, at, nul_is_invalid);
    if (length > 0) {
      out.append(text.substr(at, length));
      at += length;
      continue;
    }
    uint8_t value = uint8_t(text[at++]);
    out += "\\x";
    out += kHex[value >> 4];
    out += kHex[value & 15];
  }
  return out;
}

}  // namespace

bool is_valid_utf8(std::string_view text) { return is_valid(text, false); }

std::string valid_utf8(std::string_view text) { return escaped(text, false); }

std::string clipped_text(std::string_view text, size_t most) {
  if (text.size() <= most) return escaped(text, true);
  // Not inside a character: back over at most three continuation bytes.
  size_t cut = most;
  for (int back = 0; back < 3 && cut > 0 && (uint8_t(text[cut]) & 0xC0) == 0x80; ++back) --cut;
  if ((uint8_t(text[cut]) & 0xC0) == 0x80) cut = most;  // not UTF-8 there anyway
  return escaped(text.substr(0, cut), true) + "... (" + std::to_string(text.size() - cut) + " more characters)";
}

}  // namespace switchyard
