// Rendering of diagnostics with the source line and a caret.
#include "support/error.h"

#include <algorithm>

#include "runtime/clipped_text.h"

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
    : std::runtime_error(render_diagnostic(span, error_kind_name(kind), clipped_text(message, kMostMessageChars))),
      kind_(kind),
      message_(clipped_text(message, kMostMessageChars)),
      span_(std::move(span)) {}

std::string Error::render() const { return what(); }

namespace {

// At most kMostQuotedChars of `line` around `column` (1-based), with "..."
// where it was cut; `caret` becomes the column within the result.
std::string line_around(const std::string& line, uint32_t column, size_t* caret) {
  size_t at = column ? std::min<size_t>(column - 1, line.size()) : 0;
  if (line.size() <= kMostQuotedChars) {
    *caret = at;
    return line;
  }
  size_t start = at > kMostQuotedChars / 2 ? at - kMostQuotedChars / 2 : 0;
  start = std::min(start, line.size() - kMostQuotedChars);
  std::string prefix = start > 0 ? "..." : "";
  std::string suffix = start + kMostQuotedChars < line.size() ? "..." : "";
  *caret = prefix.size() + (at - start);
  return prefix + line.substr(start, kMostQuotedChars) + suffix;
}

}  // namespace

std::string render_diagnostic(const Span& span, const std::string& severity,
                              const std::string& message) {
  std::string out;
  if (span.defined()) out += span.to_string() + ": ";
  out += severity + ": " + message;
  if (span.defined() && !span.is_fused()) {
    size_t caret = 0;
    std::string line = line_around(source_line(span.source(), span.line()), span.column(), &caret);
    if (!line.empty()) {
      out += "\n  " + line + "\n  ";
      for (size_t i = 0; i < caret; ++i) out += line[i] == '\t' ? '\t' : ' ';
      out += "^";
    }
  }
  // The span and the quoted source line may hold any bytes; nothing is clipped here.
  return clipped_text(out, out.size());
}

}  // namespace switchyard
