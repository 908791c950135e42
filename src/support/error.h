// User-facing errors: values with a kind, a message and a span, rendered once.
#pragma once

#include <stdexcept>
#include <string>

#include "ir/span.h"

namespace switchyard {

enum class ErrorKind {
  kParse,          // malformed text IR or model file
  kType,           // type inference
  kPlacement,      // device planning, conflicting wishes
  kInvariant,      // the invariant checker after a pass
  kPass,           // pass infrastructure (unknown pass, missing requirement)
  kBackend,        // lowering, code generation, toolchain
  kRuntime,        // artifact loading and running
  kUsage,          // command-line or API misuse
};

const char* error_kind_name(ErrorKind kind);

// The longest message an Error keeps: sites quote at most a line's worth of
// input (clipped_text), and this bounds whatever else a message gathers.
constexpr size_t kMostMessageChars = 16384;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, Span span = Span());
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const Span& span() const { return span_; }
  // "file:line:column: error: message" + the source line + a caret.
  std::string render() const;

 private:
  ErrorKind kind_;
  std::string message_;
  Span span_;
};

// Renders "where: error: message" with a quoted source line and caret.
std::string render_diagnostic(const Span& span, const std::string& severity,
                              const std::string& message);

}  // namespace switchyard
