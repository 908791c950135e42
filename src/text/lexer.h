// Tokens of the text IR, produced one at a time (a 1,000,000-binding file is
// never held as a token list).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/span.h"

namespace switchyard {

enum class TokenKind : uint8_t {
  kEnd,
  kIdent,     // add, nn.dense, let, Tensor, float32, True
  kLocal,     // %x, %0 (text without '%')
  kGlobal,    // @main, @"odd name" (text without '@', quotes kept)
  kDevice,    // @cpu:0 (text "cpu:0"), @{device="cpu:0"} (text inside the braces)
  kNumber,    // 2, -1.5, 2f, 3i64, -inff
  kString,    // "text" (text with quotes and escapes as written)
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kSemicolon,
  kEquals,
  kColon,
  kDot,
  kArrow,
  kStar,       // '*' in a dimension product (196*n)
  kLessEqual,  // '<=' bounding a dimension variable (n<=64)
};

const char* token_kind_name(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  uint32_t line = 0, column = 0;
};

class Lexer {
 public:
  // `text` must outlive the lexer; `source_name` names spans.
  Lexer(std::string_view text, std::string source_name);
  // The next token; throws Error(kParse) on a character that starts none.
  Token next();
  Span span_at(uint32_t line, uint32_t column) const { return source_span_.at(line, column); }
  const std::string& source_name() const { return source_name_; }

 private:
  char peek_char(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance(size_t count = 1);
  void skip_space_and_comments();
  Token make(TokenKind kind, size_t start, uint32_t line, uint32_t column) const;
  void take_while(bool (*predicate)(char));  // advances over the characters it holds for
  Token lex_at_sign(size_t start, uint32_t line, uint32_t column);
  Token lex_number(size_t start, uint32_t line, uint32_t column);
  size_t scan_quoted(size_t start, uint32_t line, uint32_t column);  // returns the index after the closing quote

  std::string_view text_;
  std::string source_name_;
  Span source_span_;  // interned once; every token's span shares its source
  size_t pos_ = 0;
  uint32_t line_ = 1, column_ = 1;
  bool after_dot_ = false;  // `%5.1.0`: after '.', digits are a tuple index, not "1.0"
};

// The text of a quoted token ("a\"b" -> a"b).
std::string unquote(std::string_view quoted);

}  // namespace switchyard
