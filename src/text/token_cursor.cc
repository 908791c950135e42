// The token stream of the text parser (see token_cursor.h).
#include "text/token_cursor.h"

#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

TokenCursor::Nesting::Nesting(TokenCursor& cursor) : cursor_(cursor) {
  if (++cursor_.depth_ > kMaxNesting || cursor_.stack_.exhausted())
    cursor_.fail(cursor_.peek(), "nesting too deep inside one expression (at most " + std::to_string(kMaxNesting) +
                                     " levels, and fewer in sanitizer builds; bind parts with %name = ...;)");
}

const Token& TokenCursor::peek(size_t ahead) {
  while (buffered_ <= ahead) lookahead_[buffered_++] = lexer_.next();
  return lookahead_[ahead];
}

Token TokenCursor::take() {
  peek();
  Token t = lookahead_[0];
  for (size_t i = 1; i < buffered_; ++i) lookahead_[i - 1] = lookahead_[i];
  --buffered_;
  return t;
}

bool TokenCursor::accept(TokenKind kind) {
  if (peek().kind != kind) return false;
  take();
  return true;
}

Token TokenCursor::expect(TokenKind kind) {
  if (peek().kind != kind) fail(peek(), std::string("expected ") + token_kind_name(kind) + ", found " + describe(peek()));
  return take();
}

void TokenCursor::expect_word(std::string_view word) {
  if (!is_word(peek(), word)) fail(peek(), "expected '" + std::string(word) + "', found " + describe(peek()));
  take();
}

std::string TokenCursor::describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kLocal: return "'%" + clipped_text(t.text) + "'";
    case TokenKind::kGlobal: return "'@" + clipped_text(t.text) + "'";
    case TokenKind::kDevice: return "a device";
    default: return "'" + clipped_text(t.text) + "'";
  }
}

std::string TokenCursor::global_name(const Token& t) {
  return !t.text.empty() && t.text[0] == '"' ? unquote(t.text) : std::string(t.text);
}

void TokenCursor::fail(const Token& at, const std::string& message) const {
  throw Error(ErrorKind::kParse, message, span_of(at));
}

const DimVar* TokenCursor::dimension_variable(const Token& name_token, std::optional<int64_t> bound) {
  const DimVar* var = nullptr;
  try {
    var = dim_var(std::string(name_token.text), bound);
  } catch (const Error& e) {
    fail(name_token, e.message());
  }
  auto [it, first] = dimension_variables_.try_emplace(var->name, var, span_of(name_token));
  const DimVar* earlier = it->second.first;
  if (!first && earlier != var) {
    auto written = [](const DimVar* v) { return v->bound ? v->name + "<=" + std::to_string(*v->bound) : v->name; };
    fail(name_token, "dimension variable " + written(var) + " was written " + written(earlier) + " at " +
                         it->second.second.to_string() + "; a variable has one bound, written at every use");
  }
  return var;
}

}  // namespace switchyard
