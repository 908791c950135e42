// Rendering of diagnostics with the source line and a caret.
#include "support/error.h"

namespace switchyard {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kParse: return "parse error";
    case ErrorKind::kType: return "type error";
    case ErrorKind::kPlacement: return "placement error";
    case ErrorKind::kInvariant: return "invariant violated";
    case ErrorKind::kPass: return "pass error";
    case ErrorKind::kBackend: return "backend error";
    case ErrorKind::kRuntime: return "runtime error";
    case ErrorKind::kUsage: return "usage error";
  }
  return "error";
}

Error::Error(ErrorKind kind, std::string message, Span span)
    : std::runtime_error(render_diagnostic(span, error_kind_name(kind), message)),
      kind_(kind),
      message_(std::move(message)),
      span_(std::move(span)) {}

std::string Error::render() const { return what(); }

std::string render_diagnostic(const Span& span, const std::string& severity,
                              const std::string& message) {
  std::string out;
  if (span.defined()) out += span.to_string() + ": ";
  out += severity + ": " + message;
  if (span.defined() && !span.is_fused()) {
    std::string line = source_line(span.source(), span.line());
    if (!line.empty()) {
      out += "\n  " + line + "\n  ";
      for (uint32_t i = 1; i < span.column() && i <= line.size(); ++i)
        out += line[i - 1] == '\t' ? '\t' : ' ';
      out += "^";
    }
  }
  return out;
}

}  // namespace switchyard
