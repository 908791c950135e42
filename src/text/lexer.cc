// The text IR lexer (see lexer.h).
#include "text/lexer.h"

#include "support/error.h"

namespace switchyard {

namespace {
// ASCII only, and without the locale lookups of <cctype>.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_letter(c) || is_digit(c); }
}  // namespace

const char* token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kIdent: return "a name";
    case TokenKind::kLocal: return "a %name";
    case TokenKind::kGlobal: return "an @name";
    case TokenKind::kDevice: return "a device";
    case TokenKind::kNumber: return "a number";
    case TokenKind::kString: return "a string";
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLBracket: return "'['";
    case TokenKind::kRBracket: return "']'";
    case TokenKind::kLBrace: return "'{'";
    case TokenKind::kRBrace: return "'}'";
    case TokenKind::kComma: return "','";
    case TokenKind::kSemicolon: return "';'";
    case TokenKind::kEquals: return "'='";
    case TokenKind::kColon: return "':'";
    case TokenKind::kDot: return "'.'";
    case TokenKind::kArrow: return "'->'";
    case TokenKind::kStar: return "'*'";
    case TokenKind::kLessEqual: return "'<='";
  }
  return "?";
}

Lexer::Lexer(std::string_view text, std::string source_name)
    : text_(text), source_name_(std::move(source_name)), source_span_(source_name_, 0, 0) {}

void Lexer::advance(size_t count) {
  for (size_t i = 0; i < count && pos_ < text_.size(); ++i, ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_, ++column_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else {
      return;
    }
  }
}

Token Lexer::make(TokenKind kind, size_t start, uint32_t line, uint32_t column) const {
  return Token{kind, text_.substr(start, pos_ - start), line, column};
}

size_t Lexer::scan_quoted(size_t start, uint32_t line, uint32_t column) {
  advance();  // the opening quote
  while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') advance(text_[pos_] == '\\' ? 2 : 1);
  if (pos_ >= text_.size() || text_[pos_] != '"')
    throw Error(ErrorKind::kParse, "unterminated string", span_at(line, column));
  advance();
  return pos_;
}

void Lexer::take_while(bool (*predicate)(char)) {
  while (pos_ < text_.size() && predicate(text_[pos_])) ++pos_, ++column_;
}

// At the '@' at `start`: a global "@name" or "@\"quoted name\"", or a device "@{...}" or "@cpu:0".
Token Lexer::lex_at_sign(size_t start, uint32_t line, uint32_t column) {
  advance();
  if (peek_char() == '{') {
    advance();
    while (pos_ < text_.size() && text_[pos_] != '}') {
      if (text_[pos_] == '"') scan_quoted(pos_, line_, column_);
      else advance();
    }
    if (pos_ >= text_.size()) throw Error(ErrorKind::kParse, "unterminated device '@{'", span_at(line, column));
    advance();
    Token t = make(TokenKind::kDevice, start, line, column);
    t.text = t.text.substr(2, t.text.size() - 3);
    return t;
  }
  if (peek_char() == '"') {
    scan_quoted(pos_, line, column);
    Token t = make(TokenKind::kGlobal, start, line, column);
    t.text.remove_prefix(1);
    return t;
  }
  take_while(is_name_char);
  if (pos_ == start + 1)
    throw Error(ErrorKind::kParse, "expected a name or a device after '@'", span_at(line, column));
  TokenKind kind = TokenKind::kGlobal;
  if (peek_char() == ':') {  // a short-form device: @cpu:0
    advance();
    take_while([](char ch) { return is_name_char(ch) || ch == '?'; });
    kind = TokenKind::kDevice;
  }
  Token t = make(kind, start, line, column);
  t.text.remove_prefix(1);
  return t;
}

// A number at `start`: an optional '-', digits, a fraction, an exponent and
// a dtype suffix ("2.5e-3f16"), or -inf / -nan with a suffix.
Token Lexer::lex_number(size_t start, uint32_t line, uint32_t column) {
  if (peek_char() == '-') advance();
  if (is_letter(peek_char())) {  // -inf, -nan with a suffix
    take_while(is_name_char);
    return make(TokenKind::kNumber, start, line, column);
  }
  take_while(is_digit);
  if (peek_char() == '.' && is_digit(peek_char(1))) {
    advance();
    take_while(is_digit);
  }
  if ((peek_char() == 'e' || peek_char() == 'E') &&
      (is_digit(peek_char(1)) || ((peek_char(1) == '-' || peek_char(1) == '+') && is_digit(peek_char(2))))) {
    advance(2);
    take_while(is_digit);
  }
  take_while(is_name_char);  // a dtype suffix: f, f16, i64, ...
  return make(TokenKind::kNumber, start, line, column);
}

Token Lexer::next() {
  skip_space_and_comments();
  size_t start = pos_;
  uint32_t line = line_, column = column_;
  bool after_dot = after_dot_;
  after_dot_ = false;
  if (pos_ >= text_.size()) return Token{TokenKind::kEnd, {}, line, column};
  char c = text_[pos_];
  if (after_dot && is_digit(c)) {
    take_while(is_digit);
    return make(TokenKind::kNumber, start, line, column);
  }
  if (c == '%') {
    advance();
    take_while(is_name_char);
    if (pos_ == start + 1) throw Error(ErrorKind::kParse, "expected a name after '%'", span_at(line, column));
    Token t = make(TokenKind::kLocal, start, line, column);
    t.text.remove_prefix(1);
    return t;
  }
  if (c == '@') return lex_at_sign(start, line, column);
  if (c == '-' && peek_char(1) == '>') {
    advance(2);
    return make(TokenKind::kArrow, start, line, column);
  }
  if (c == '<' && peek_char(1) == '=') {
    advance(2);
    return make(TokenKind::kLessEqual, start, line, column);
  }
  if (is_digit(c) || (c == '-' && (is_digit(peek_char(1)) || peek_char(1) == 'i' || peek_char(1) == 'n')))
    return lex_number(start, line, column);
  if (is_letter(c)) {
    take_while([](char ch) { return is_name_char(ch) || ch == '.'; });
    return make(TokenKind::kIdent, start, line, column);
  }
  if (c == '"') {
    scan_quoted(pos_, line, column);
    return make(TokenKind::kString, start, line, column);
  }
  TokenKind kind;
  switch (c) {
    case '(': kind = TokenKind::kLParen; break;
    case ')': kind = TokenKind::kRParen; break;
    case '[': kind = TokenKind::kLBracket; break;
    case ']': kind = TokenKind::kRBracket; break;
    case '{': kind = TokenKind::kLBrace; break;
    case '}': kind = TokenKind::kRBrace; break;
    case ',': kind = TokenKind::kComma; break;
    case '*': kind = TokenKind::kStar; break;
    case ';': kind = TokenKind::kSemicolon; break;
    case '=': kind = TokenKind::kEquals; break;
    case ':': kind = TokenKind::kColon; break;
    case '.': kind = TokenKind::kDot; after_dot_ = true; break;
    default:
      throw Error(ErrorKind::kParse, std::string("unexpected character '") + c + "'", span_at(line, column));
  }
  advance();
  return make(kind, start, line, column);
}

std::string unquote(std::string_view quoted) {
  std::string out;
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    char c = quoted[i];
    if (c == '\\' && i + 2 < quoted.size()) {
      char e = quoted[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace switchyard
