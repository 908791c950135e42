// Types, tensor literals and attribute values of the text IR (see value_parser.h).
#include "text/value_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>

#include "runtime/clipped_text.h"
#include "support/error.h"
#include "text/literals.h"

namespace switchyard {

namespace {

AttrValue parse_attr_number(TokenCursor& in, const Token& t) {
  std::string_view text = t.text;
  if (is_integer_text(text)) {
    int64_t value = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc()) in.fail(t, "integer '" + clipped_text(text) + "' is out of range");
    return value;
  }
  bool negative = !text.empty() && text[0] == '-';
  std::string_view body = negative ? text.substr(1) : text;
  if (body == "nan" || body == "inf") {
    double value = body == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    return negative ? -value : value;
  }
  if (!text.empty() && text.back() == 'f') text.remove_suffix(1);  // "2f" as in constants
  double value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size())
    in.fail(t, "malformed number '" + clipped_text(t.text) + "'");
  return value;
}

// The rest of "[" "a", "b" "]" (a function's output names).
AttrValue parse_string_list(TokenCursor& in) {
  std::vector<std::string> items;
  while (in.peek().kind != TokenKind::kRBracket) {
    Token item = in.take();
    if (item.kind != TokenKind::kString) in.fail(item, "expected a string in the list, found " + in.describe(item));
    items.push_back(unquote(item.text));
    if (!in.accept(TokenKind::kComma)) break;
  }
  in.expect(TokenKind::kRBracket);
  return items;
}

}  // namespace

// "Tensor[(2), float32]{1, 2}", "Tensor[(64), float32]{b64"..."}", "float32{b64"..."}".
// The data is read and checked before the array is allocated, so the
// allocation is bounded by the text that fills it: a short file cannot
// declare a huge constant and make the parser zero gigabytes first.
Expr parse_tensor_literal(TokenCursor& in) {
  Token first = in.peek();
  Type type = parse_type(in);
  const TensorTypeNode* tensor = as_tensor(type);
  if (!tensor->is_static())
    in.fail(first, "a tensor literal needs a static shape, got " + clipped_text(type_to_string(type)));
  int64_t count = tensor->numel();
  int64_t nbytes = tensor->nbytes();
  in.expect(TokenKind::kLBrace);
  std::string bytes;
  if (in.is_word(in.peek(), "b64") && in.peek(1).kind == TokenKind::kString) {
    in.take();
    Token encoded = in.take();
    std::optional<std::string> decoded = base64_decode(encoded.text.substr(1, encoded.text.size() - 2));
    if (!decoded) in.fail(encoded, "malformed base64 data");
    if (int64_t(decoded->size()) != nbytes)
      in.fail(encoded, "base64 data has " + std::to_string(decoded->size()) + " bytes; " + type_to_string(type) +
                        " needs " + std::to_string(nbytes));
    bytes = std::move(*decoded);
  } else {
    // Each element goes through a scalar of the dtype into `bytes`.
    NDArray element_value(tensor->dtype, {});
    int64_t index = 0;
    while (in.peek().kind != TokenKind::kRBrace) {
      const Token& element = in.peek();
      if (element.kind != TokenKind::kNumber && element.kind != TokenKind::kIdent)
        in.fail(element, "expected a tensor element, found " + in.describe(element));
      if (index >= count)
        in.fail(element, "too many elements: " + type_to_string(type) + " has " + std::to_string(count));
      std::string error = set_element_from_text(element_value, 0, element.text);
      if (!error.empty()) in.fail(element, error);
      bytes.append(static_cast<const char*>(element_value.data()), size_t(dtype_bytes(tensor->dtype)));
      ++index;
      in.take();
      if (!in.accept(TokenKind::kComma)) break;
    }
    if (index != count)
      in.fail(in.peek(), type_to_string(type) + " needs " + std::to_string(count) + " elements, found " +
                       std::to_string(index));
  }
  in.expect(TokenKind::kRBrace);
  NDArray data;
  try {
    data = NDArray(tensor->dtype, tensor->shape);
  } catch (const std::exception& e) {
    in.fail(first, e.what());
  }
  if (!bytes.empty()) std::memcpy(data.data(), bytes.data(), bytes.size());
  return make_constant(std::move(data), {.span = in.span_of(first)});
}

namespace {

int64_t parse_dim_number(TokenCursor& in, const Token& number, const char* what) {
  int64_t value = -1;
  auto result = std::from_chars(number.text.data(), number.text.data() + number.text.size(), value);
  if (result.ec != std::errc() || result.ptr != number.text.data() + number.text.size() || value < 0)
    in.fail(number, std::string("expected ") + what + " (a non-negative integer), found " + in.describe(number));
  return value;
}

}  // namespace

DimExpr parse_dim(TokenCursor& in) {
  DimExpr product(int64_t(1));
  do {
    Token factor = in.take();
    if (factor.kind == TokenKind::kNumber) {
      product = product * DimExpr(parse_dim_number(in, factor, "a dimension"));
      continue;
    }
    if (factor.kind != TokenKind::kIdent)
      in.fail(factor, "expected a dimension (a non-negative integer or a variable such as n), found " +
                          in.describe(factor));
    std::optional<int64_t> bound;
    if (in.accept(TokenKind::kLessEqual)) bound = parse_dim_number(in, in.expect(TokenKind::kNumber), "a bound");
    product = product * DimExpr(in.dimension_variable(factor, bound));
  } while (in.accept(TokenKind::kStar));
  return product;
}

Type parse_type(TokenCursor& in) {
  TokenCursor::Nesting nesting(in);
  Token t = in.take();
  if (in.is_word(t, "Tensor")) {
    in.expect(TokenKind::kLBracket);
    in.expect(TokenKind::kLParen);
    std::vector<DimExpr> dims;
    while (in.peek().kind != TokenKind::kRParen) {
      dims.push_back(parse_dim(in));
      if (!in.accept(TokenKind::kComma)) break;
    }
    in.expect(TokenKind::kRParen);
    in.expect(TokenKind::kComma);
    DType dtype = parse_dtype_token(in, in.expect(TokenKind::kIdent));
    in.expect(TokenKind::kRBracket);
    try {
      return tensor_type_of_dims(std::move(dims), dtype);
    } catch (const Error& e) {
      in.fail(t, e.message());
    }
  }
  if (in.is_word(t, "fn")) {
    in.expect(TokenKind::kLParen);
    std::vector<Type> params = parse_type_list(in);
    in.expect(TokenKind::kArrow);
    return func_type(std::move(params), parse_type(in));
  }
  if (t.kind == TokenKind::kIdent) return scalar_type(parse_dtype_token(in, t));
  if (t.kind == TokenKind::kLParen) return tuple_type(parse_type_list(in));
  in.fail(t, "expected a type, found " + in.describe(t));
}

std::vector<Type> parse_type_list(TokenCursor& in) {
  std::vector<Type> types;
  while (in.peek().kind != TokenKind::kRParen) {
    types.push_back(parse_type(in));
    if (!in.accept(TokenKind::kComma)) break;
  }
  in.expect(TokenKind::kRParen);
  return types;
}

DType parse_dtype_token(TokenCursor& in, const Token& t) {
  std::optional<DType> dtype = parse_dtype(t.text);
  if (!dtype) in.fail(t, "unknown type '" + clipped_text(t.text) + "'");
  return *dtype;
}

AttrValue parse_attr_value(TokenCursor& in) {
  Token t = in.take();
  switch (t.kind) {
    case TokenKind::kNumber: return parse_attr_number(in, t);
    case TokenKind::kString: return unquote(t.text);
    case TokenKind::kIdent:
      if (t.text == "True") return true;
      if (t.text == "False") return false;
      if (t.text == "None") return std::monostate();
      if (t.text == "nan" || t.text == "inf") return parse_attr_number(in, t);
      break;
    case TokenKind::kLBracket: {
      if (in.peek().kind == TokenKind::kString) return parse_string_list(in);
      std::vector<AttrValue> items;
      while (in.peek().kind != TokenKind::kRBracket) {
        Token item = in.take();
        if (item.kind != TokenKind::kNumber && !in.is_word(item, "nan") && !in.is_word(item, "inf"))
          in.fail(item, "expected a number in the list, found " + in.describe(item));
        items.push_back(parse_attr_number(in, item));
        if (!in.accept(TokenKind::kComma)) break;
      }
      in.expect(TokenKind::kRBracket);
      bool all_ints = std::all_of(items.begin(), items.end(),
                                  [](const AttrValue& v) { return std::holds_alternative<int64_t>(v); });
      if (all_ints) {
        std::vector<int64_t> ints;
        for (const AttrValue& v : items) ints.push_back(std::get<int64_t>(v));
        return ints;
      }
      std::vector<double> doubles;
      for (const AttrValue& v : items)
        doubles.push_back(std::holds_alternative<int64_t>(v) ? double(std::get<int64_t>(v)) : std::get<double>(v));
      return doubles;
    }
    default: break;
  }
  in.fail(t, "expected an attribute value (a number, a string, True, False, None or a list), found " + in.describe(t));
}

}  // namespace switchyard
