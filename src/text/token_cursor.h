// The text parser's view of the token stream: three tokens of lookahead,
// the expect/accept vocabulary, and errors that point at a token. The
// parsers of values (value_parser.h) and of the module (parser.cc) read
// tokens through it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ir/dim.h"
#include "ir/span.h"
#include "support/stack_budget.h"
#include "text/lexer.h"

namespace switchyard {

class TokenCursor {
 public:
  TokenCursor(const std::string& text, const std::string& source_name) : lexer_(text, source_name) {}

  // Nesting guard for the recursive parts of the grammar: at most
  // kMaxNesting levels inside one expression, and fewer when the stack runs low.
  static constexpr int kMaxNesting = 1000;
  class Nesting {
   public:
    explicit Nesting(TokenCursor& cursor);
    ~Nesting() { --cursor_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    TokenCursor& cursor_;
  };

  const Token& peek(size_t ahead = 0);
  Token take();
  bool accept(TokenKind kind);
  Token expect(TokenKind kind);  // or fail naming what was found
  void expect_word(std::string_view word);
  static bool is_word(const Token& t, std::string_view word) { return t.kind == TokenKind::kIdent && t.text == word; }
  // A token as a message quotes it: "'%x'", "end of input".
  static std::string describe(const Token& t);
  // "@name" or "@\"quoted name\"" without its sigil and quotes.
  static std::string global_name(const Token& t);

  Span span_of(const Token& t) const { return lexer_.span_at(t.line, t.column); }
  // Error(kParse) at the token.
  [[noreturn]] void fail(const Token& at, const std::string& message) const;

  // The dimension variable named at `name_token` with `bound`. One name is
  // one variable in a text: Error(kParse) at the token when it was named
  // earlier with another bound (or without one), naming where.
  const DimVar* dimension_variable(const Token& name_token, std::optional<int64_t> bound);

 private:
  // Each dimension variable named so far, and the token that first named it.
  std::map<std::string, std::pair<const DimVar*, Span>, std::less<>> dimension_variables_;
  Lexer lexer_;
  Token lookahead_[3];
  size_t buffered_ = 0;
  int depth_ = 0;
  StackBudget stack_;
};

}  // namespace switchyard
