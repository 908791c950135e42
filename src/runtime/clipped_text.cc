// Clipping quoted input for messages (see clipped_text.h).
#include "runtime/clipped_text.h"

namespace switchyard {

std::string clipped_text(std::string_view text, size_t most) {
  if (text.size() <= most) return std::string(text);
  return std::string(text.substr(0, most)) + "... (" + std::to_string(text.size() - most) + " more characters)";
}

}  // namespace switchyard
