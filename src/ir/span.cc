// Span interning and rendering.
#include "ir/span.h"

#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "runtime/clipped_text.h"

namespace switchyard {

namespace {

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

// Sources are named by model files (node names, file names) that may hold
// any bytes; spans reach messages, Python and the manifest's JSON, so each
// name is kept as valid UTF-8 (invalid bytes written "\xHH").
const std::string* intern_source(std::string_view name) {
  static auto* table = new std::unordered_set<std::string>();
  std::string text = valid_utf8(name);
  std::lock_guard<std::mutex> lock(table_mutex());
  return &*table->emplace(std::move(text)).first;
}

std::unordered_map<std::string, std::string>& source_texts() {
  static auto* texts = new std::unordered_map<std::string, std::string>();
  return *texts;
}

const std::string& empty_string() {
  static const std::string empty;
  return empty;
}

}  // namespace

Span::Span(std::string_view source, uint32_t line, uint32_t column)
    : source_(intern_source(source)), line_(line), column_(column) {}

Span Span::fused(const std::vector<Span>& parts) {
  std::vector<Span> flat;
  for (const Span& s : parts) {
    for (const Span& p : s.parts()) {
      bool seen = false;
      for (const Span& f : flat) seen = seen || f == p;
      if (!seen) flat.push_back(p);
    }
  }
  if (flat.empty()) return Span();
  if (flat.size() == 1) return flat[0];
  Span out;
  out.parts_ = std::make_shared<const std::vector<Span>>(std::move(flat));
  return out;
}

Span Span::at(uint32_t line, uint32_t column) const {
  Span out;
  out.source_ = parts_ ? (*parts_)[0].source_ : source_;
  out.line_ = line;
  out.column_ = column;
  return out;
}

const std::string& Span::source() const {
  if (parts_) return (*parts_)[0].source();
  return source_ ? *source_ : empty_string();
}
uint32_t Span::line() const { return parts_ ? (*parts_)[0].line() : line_; }
uint32_t Span::column() const { return parts_ ? (*parts_)[0].column() : column_; }

std::vector<Span> Span::parts() const {
  if (parts_) return *parts_;
  if (!defined()) return {};
  return {*this};
}

std::string Span::to_string() const {
  if (parts_) {
    std::string out = "fused(";
    for (size_t i = 0; i < parts_->size(); ++i) {
      if (i) out += ", ";
      out += (*parts_)[i].to_string();
    }
    return out + ")";
  }
  if (!source_) return "<unknown>";
  if (line_ == 0) return *source_;
  return *source_ + ":" + std::to_string(line_) + ":" + std::to_string(column_);
}

bool Span::operator==(const Span& o) const {
  if (parts_ || o.parts_) {
    if (!parts_ || !o.parts_) return false;
    return *parts_ == *o.parts_;
  }
  return source_ == o.source_ && line_ == o.line_ && column_ == o.column_;
}

size_t Span::hash() const {
  size_t h = std::hash<const void*>()(source_) ^ (size_t(line_) << 20) ^ column_;
  if (parts_)
    for (const Span& p : *parts_) h = h * 31 + p.hash();
  return h;
}

void register_source_text(const std::string& source, std::string text) {
  std::string name = valid_utf8(source);  // as spans name it
  std::lock_guard<std::mutex> lock(table_mutex());
  source_texts()[name] = std::move(text);
}

std::string source_line(const std::string& source, uint32_t line) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto it = source_texts().find(source);
  if (it == source_texts().end() || line == 0) return "";
  const std::string& text = it->second;
  size_t pos = 0;
  for (uint32_t l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

}  // namespace switchyard
