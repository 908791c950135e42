// Quoting input in messages and JSON: at most a line's worth of it, however
// large the input, so a 200 MB attribute or source line never becomes a
// 200 MB error; and always valid UTF-8, since a name read from a model file
// may hold any byte, and JSON (the manifest) and Python strings take only
// UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard {

constexpr size_t kMostQuotedChars = 200;

// `text` itself when at most `most` bytes, else its first `most` bytes (cut
// back to a whole UTF-8 character) and "... (N more characters)"; in both
// cases with what valid_utf8 escapes escaped, and NUL bytes too (a C string,
// such as an exception's what(), would end at one).
std::string clipped_text(std::string_view text, size_t most = kMostQuotedChars);

// `text` with each byte that is not part of a well-formed UTF-8 character
// (RFC 3629) written as the four characters "\xHH" (HH its value in hex), so
// it can be written to JSON and read by Python; valid text is unchanged.
std::string valid_utf8(std::string_view text);

// Whether `text` is well-formed UTF-8 (what JSON and Python accept).
bool is_valid_utf8(std::string_view text);

}  // namespace switchyard
