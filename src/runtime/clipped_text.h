// Quoting input in messages: at most a line's worth of it, however large the
// input, so a 200 MB attribute or source line never becomes a 200 MB error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard {

constexpr size_t kMostQuotedChars = 200;

// `text` itself when at most `most` characters, else its first `most`
// characters and "... (N more characters)".
std::string clipped_text(std::string_view text, size_t most = kMostQuotedChars);

}  // namespace switchyard
