// Where a node came from: a text-IR file position or an imported model node.
//
// A span is a small value: an interned source name plus line and column
// (line 0 for a model-node name such as an ONNX node). A node made from
// several others (a fused function, a folded constant) keeps every original
// span in `parts`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

class Span {
 public:
  Span() = default;
  // `source` is interned; line/column are 1-based (0 = no position).
  Span(std::string_view source, uint32_t line, uint32_t column);
  // A span made from several (duplicates and empty spans are dropped; one
  // remaining part becomes that part).
  static Span fused(const std::vector<Span>& parts);
  // A span at another position in the same source, without interning the
  // source name again (the parser makes one per node).
  Span at(uint32_t line, uint32_t column) const;

  bool defined() const { return source_ != nullptr || parts_ != nullptr; }
  bool is_fused() const { return parts_ != nullptr; }
  // For a fused span: the first part's position.
  const std::string& source() const;
  uint32_t line() const;
  uint32_t column() const;
  // Every original span (itself when not fused).
  std::vector<Span> parts() const;

  // "file:line:column", "node-name", or "fused(a, b, ...)".
  std::string to_string() const;

  bool operator==(const Span& o) const;
  bool operator!=(const Span& o) const { return !(*this == o); }
  size_t hash() const;

 private:
  const std::string* source_ = nullptr;
  uint32_t line_ = 0, column_ = 0;
  std::shared_ptr<const std::vector<Span>> parts_;
};

// Keeps the text of each parsed source so diagnostics can quote a line.
void register_source_text(const std::string& source, std::string text);
// The 1-based line of a registered source, or "" when unknown.
std::string source_line(const std::string& source, uint32_t line);

}  // namespace switchyard
