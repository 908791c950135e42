// The text IR parser (see parser.h and docs/text-format.md): recursive
// descent inside one expression (guarded at 1000 levels), loops over the
// statements of a block, so a long block or let chain costs no stack.
#include "text/parser.h"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "ir/with_fields.h"
#include "op/registry.h"
#include "runtime/clipped_text.h"
#include "support/error.h"
#include "text/lexer.h"
#include "text/literals.h"
#include "text/token_cursor.h"
#include "text/value_parser.h"

namespace switchyard {

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'nn.relu'?)" for a near miss, else "".
std::string operator_suggestion(std::string_view name) {
  std::string best;
  size_t best_distance = 3;
  for (const OpDef* def : all_op_defs()) {
    const std::string& candidate = def->name;
    // The distance is at least the difference in length: a long name needs no table.
    if (name.size() >= candidate.size() + best_distance) continue;
    size_t distance = edit_distance(name, candidate);
    size_t dot = candidate.rfind('.');
    if (dot != std::string::npos && candidate.substr(dot + 1) == name) distance = 0;
    if (distance < best_distance) best_distance = distance, best = candidate;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// The module, its functions, blocks and expressions; tokens come through
// the cursor and values (types, literals, attributes) from value_parser.h.
class Parser : private TokenCursor {
 public:
  Parser(const std::string& text, const std::string& source_name) : TokenCursor(text, source_name) {}

  IRModule parse() {
    IRModule module;
    std::unordered_map<std::string, Span> defined;
    while (peek().kind != TokenKind::kEnd) {
      if (!is_word(peek(), "def")) fail(peek(), "expected 'def', found " + describe(peek()));
      Token def_token = take();
      Token name_token = expect(TokenKind::kGlobal);
      std::string name = global_name(name_token);
      auto [it, inserted] = defined.emplace(name, span_of(name_token));
      if (!inserted)
        fail(name_token,
             "function @" + clipped_text(name) + " is defined twice (first at " + it->second.to_string() + ")");
      module.add(name, parse_function_rest(def_token));
    }
    for (const auto& [name, span] : global_references_)
      if (!defined.count(name)) throw Error(ErrorKind::kParse, "undefined function @" + clipped_text(name), span);
    return module;
  }

 private:
  struct Binding {
    Expr node;
    Span span;
  };

  Type parse_type() { return switchyard::parse_type(*this); }
  AttrValue parse_attr_value() { return switchyard::parse_attr_value(*this); }
  Expr parse_tensor_literal() { return switchyard::parse_tensor_literal(*this); }

  // --- names ---
  void bind(const Token& name, Expr node) {
    auto [it, inserted] = names_.try_emplace(name.text, Binding{std::move(node), span_of(name)});
    if (!inserted)
      fail(name, "%" + clipped_text(name.text) + " is already bound at " + it->second.span.to_string());
    bound_.push_back(name.text);
  }
  size_t open_scope() const { return bound_.size(); }
  void close_scope(size_t mark) {
    while (bound_.size() > mark) {
      names_.erase(bound_.back());
      bound_.pop_back();
    }
  }

  // --- devices ---
  bool at_device() { return peek().kind == TokenKind::kDevice || peek().kind == TokenKind::kGlobal; }
  const VirtualDevice* parse_device() {
    Token t = take();
    if (t.text.find_first_not_of(" \t\n") == std::string_view::npos) return VirtualDevice::unconstrained();
    try {
      return VirtualDevice::parse(t.text);
    } catch (const Error& e) {
      fail(t, e.message());
    }
  }

  // --- functions ---
  struct Signature {
    std::vector<Var> params;
    std::vector<std::pair<std::string, AttrValue>> attrs;
    Type ret_type;
    const VirtualDevice* device = nullptr;
  };

  // After 'def @name' or 'fn': "(params) [-> type] [device] { block }".
  Function parse_function_rest(const Token& first) {
    size_t mark = open_scope();
    Signature signature = parse_signature();
    expect(TokenKind::kLBrace);
    Expr body = parse_block();
    close_scope(mark);
    Attrs attrs = signature.attrs.empty() ? Attrs() : make_attrs(std::move(signature.attrs));
    return make_function(std::move(signature.params), std::move(body), std::move(signature.ret_type),
                         std::move(attrs), {.virtual_device = signature.device, .span = span_of(first)});
  }

  Signature parse_signature() {
    Signature s;
    expect(TokenKind::kLParen);
    while (peek().kind != TokenKind::kRParen) {
      if (peek().kind == TokenKind::kLocal) {
        Token name = take();
        Type type = accept(TokenKind::kColon) ? parse_type() : Type();
        const VirtualDevice* device = at_device() ? parse_device() : nullptr;
        Var var = make_var(std::string(name.text), std::move(type), {.virtual_device = device, .span = span_of(name)});
        bind(name, var);
        s.params.push_back(std::move(var));
      } else if (peek().kind == TokenKind::kIdent && peek(1).kind == TokenKind::kEquals) {
        std::string name(take().text);
        take();
        s.attrs.emplace_back(std::move(name), parse_attr_value());
      } else {
        fail(peek(), "expected a parameter '%name' or an attribute 'name=value', found " + describe(peek()));
      }
      if (!accept(TokenKind::kComma)) break;
    }
    expect(TokenKind::kRParen);
    if (accept(TokenKind::kArrow)) s.ret_type = parse_type();
    if (at_device()) s.device = parse_device();
    return s;
  }

  // --- blocks ---
  struct PendingLet {
    Token let_token;
    Var var;
    Expr value;
    std::optional<const VirtualDevice*> device;  // the Let's own device, when stated
  };

  // After '{': statements, the final expression and '}'.
  Expr parse_block() {
    size_t mark = open_scope();
    std::vector<PendingLet> lets;
    Expr result;
    while (true) {
      if (is_word(peek(), "let")) {
        PendingLet let{take(), Var(), Expr(), std::nullopt};
        if (at_device()) let.device = parse_device();
        Token name = expect(TokenKind::kLocal);
        Type type = accept(TokenKind::kColon) ? parse_type() : Type();
        std::optional<const VirtualDevice*> var_device;
        if (at_device()) var_device = parse_device();
        expect(TokenKind::kEquals);
        let.value = parse_expr();
        expect(TokenKind::kSemicolon);
        let.var = make_var(std::string(name.text), std::move(type),
                           {.virtual_device = var_device.value_or(let.value->virtual_device()), .span = span_of(name)});
        bind(name, let.var);
        lets.push_back(std::move(let));
      } else if (peek().kind == TokenKind::kLocal && peek(1).kind == TokenKind::kEquals) {
        Token name = take();
        take();
        Expr value = parse_expr();
        expect(TokenKind::kSemicolon);
        bind(name, std::move(value));
      } else {
        result = parse_expr();
        expect(TokenKind::kRBrace);
        break;
      }
    }
    close_scope(mark);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
      const VirtualDevice* device = it->device.value_or(result->virtual_device());
      result = make_let(std::move(it->var), std::move(it->value), std::move(result),
                        {.virtual_device = device, .span = span_of(it->let_token)});
    }
    return result;
  }

  // --- expressions ---
  Expr parse_expr() {
    Nesting nesting(*this);
    Token first = peek();
    bool is_reference = false;
    Expr e = parse_primary(&is_reference);
    while (true) {
      TokenKind kind = peek().kind;
      if (kind == TokenKind::kLParen) {
        e = parse_call(std::move(e), first, nullptr);
      } else if (kind == TokenKind::kDot) {
        take();
        Token index = expect(TokenKind::kNumber);
        int value = 0;
        auto result = std::from_chars(index.text.data(), index.text.data() + index.text.size(), value);
        if (result.ec != std::errc() || result.ptr != index.text.data() + index.text.size() || value < 0)
          fail(index, "expected a tuple index, found " + describe(index));
        e = make_tuple_get_item(std::move(e), value, {.span = span_of(first)});
      } else if (kind == TokenKind::kDevice || kind == TokenKind::kGlobal) {
        if (is_reference)
          fail(peek(), "a device must follow the expression it places, not a reference to a value bound elsewhere");
        e = with_meta(e, {.virtual_device = parse_device()});
      } else {
        break;
      }
      is_reference = false;
    }
    return e;
  }

  Expr parse_primary(bool* is_reference) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::kLocal: {
        auto it = names_.find(t.text);
        if (it == names_.end()) fail(t, "undefined variable %" + clipped_text(t.text));
        *is_reference = true;
        take();
        return it->second.node;
      }
      case TokenKind::kGlobal: {
        Token name = take();
        Span span = span_of(name);
        global_references_.emplace_back(global_name(name), span);
        *is_reference = true;
        return make_global_var(global_name(name), {.span = span});
      }
      case TokenKind::kNumber: return parse_scalar(take());
      case TokenKind::kLParen: {
        Token open = take();
        if (accept(TokenKind::kRParen)) return make_tuple({}, {.span = span_of(open)});
        Expr first = parse_expr();
        if (accept(TokenKind::kRParen)) {
          *is_reference = first->kind() == ExprKind::kVar || first->kind() == ExprKind::kGlobalVar ||
                          first->kind() == ExprKind::kOp;
          return first;
        }
        std::vector<Expr> fields{std::move(first)};
        while (accept(TokenKind::kComma) && peek().kind != TokenKind::kRParen) fields.push_back(parse_expr());
        expect(TokenKind::kRParen);
        return make_tuple(std::move(fields), {.span = span_of(open)});
      }
      case TokenKind::kLBrace:
        take();
        *is_reference = true;  // the block's value is placed inside it
        return parse_block();
      case TokenKind::kIdent: return parse_word(is_reference);
      default: fail(t, "expected an expression, found " + describe(t));
    }
  }

  Expr parse_scalar(const Token& t) {
    std::string error;
    NDArray data = parse_scalar_literal(t.text, &error);
    if (!error.empty()) fail(t, error);
    return make_constant(std::move(data), {.span = span_of(t)});
  }

  // An expression starting with a word: a keyword, a literal or an operator.
  Expr parse_word(bool* is_reference) {
    const Token& t = peek();
    std::string_view word = t.text;
    if (word == "if") return parse_if();
    if (word == "fn") {
      Token first = take();
      return parse_function_rest(first);
    }
    if (word == "True" || word == "False") return parse_scalar(take());
    if ((word == "Tensor" && peek(1).kind == TokenKind::kLBracket) ||
        (peek(1).kind == TokenKind::kLBrace && parse_dtype(word)))
      return parse_tensor_literal();
    if (word.substr(0, 3) == "nan" || word.substr(0, 3) == "inf") {
      std::string error;
      parse_scalar_literal(word, &error);
      if (error.empty()) return parse_scalar(take());
    }
    if (word == "let") fail(t, "'let' must start a statement of a block");
    if (word == "meta" && peek(1).kind == TokenKind::kLBracket) refuse_elided_constant();
    auto known = operators_.find(word);
    if (known == operators_.end()) {
      const OpDef* def = find_op_def(std::string(word));
      if (!def) fail(t, "unknown operator '" + clipped_text(word) + "'" + operator_suggestion(word));
      known = operators_.emplace(word, op_get(def->name)).first;
    }
    Op op = known->second;
    Token name = take();
    if (peek().kind == TokenKind::kLParen) return parse_call(op, name, op->def);
    *is_reference = true;
    return op;
  }

  // meta[Constant][i]: a constant printed without its data (show_weights
  // off), which no text can bring back.
  [[noreturn]] void refuse_elided_constant() {
    Token t = take();
    std::string reference(t.text);
    // The rest of "meta[Constant][0]": the error ends the parse, so take it.
    for (int i = 0; i < 6 && peek().kind != TokenKind::kEnd; ++i) reference += take().text;
    fail(t, clipped_text(reference) + " is a constant the printer elided: this text was printed without its weights "
                                      "and does not parse back; print it with show_weights=True (Python) or "
                                      "--show-weights (switchyard import, opt)");
  }

  Expr parse_if() {
    Token first = take();
    expect(TokenKind::kLParen);
    Expr cond = parse_expr();
    expect(TokenKind::kRParen);
    expect(TokenKind::kLBrace);
    Expr then_branch = parse_block();
    expect_word("else");
    expect(TokenKind::kLBrace);
    Expr else_branch = parse_block();
    return make_if(std::move(cond), std::move(then_branch), std::move(else_branch), {.span = span_of(first)});
  }

  // After the callee: "(args, name=value, ...)".
  Expr parse_call(Expr callee, const Token& callee_token, const OpDef* def) {
    expect(TokenKind::kLParen);
    std::vector<Expr> args;
    std::vector<std::pair<std::string, AttrValue>> given;
    std::vector<Token> attr_tokens;
    while (peek().kind != TokenKind::kRParen) {
      if (peek().kind == TokenKind::kIdent && peek(1).kind == TokenKind::kEquals) {
        attr_tokens.push_back(take());
        take();
        given.emplace_back(std::string(attr_tokens.back().text), parse_attr_value());
      } else {
        args.push_back(parse_expr());
      }
      if (!accept(TokenKind::kComma)) break;
    }
    expect(TokenKind::kRParen);
    Attrs attrs;
    if (def && given.empty()) {
      // Calls without attributes share one normalized (immutable) set per operator.
      auto cached = default_attrs_.find(def);
      if (cached != default_attrs_.end()) attrs = cached->second;
    }
    if (def && !attrs) {
      bool defaults = given.empty();
      try {
        attrs = normalize_attrs(*def, std::move(given));
        if (defaults) default_attrs_.emplace(def, attrs);
      } catch (const Error& e) {
        // Point at the attribute the message names, else at the operator.
        const Token* at = &callee_token;
        for (const Token& a : attr_tokens)
          if (e.message().find("'" + std::string(a.text) + "'") != std::string::npos) at = &a;
        fail(*at, e.message());
      }
    } else if (!given.empty()) {
      attrs = make_attrs(std::move(given));
    }
    return make_call(std::move(callee), std::move(args), std::move(attrs), {.span = span_of(callee_token)});
  }

  std::unordered_map<std::string_view, Binding> names_;
  std::vector<std::string_view> bound_;
  std::vector<std::pair<std::string, Span>> global_references_;
  std::unordered_map<std::string_view, Op> operators_;  // by the name as written
  std::unordered_map<const OpDef*, Attrs> default_attrs_;
};

}  // namespace

IRModule parse_module(const std::string& text, const std::string& source_name) {
  return Parser(text, source_name).parse();
}

IRModule parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kUsage, "cannot read '" + path + "': " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  register_source_text(path, text);
  return parse_module(text, path);
}

}  // namespace switchyard
