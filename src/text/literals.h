// Text forms of numbers, attribute values and constants, shared by the
// printer and the parser so that every value reads back bit-exactly.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/attrs.h"
#include "runtime/ndarray.h"

namespace switchyard {

// Constants with at most this many elements are written element by element;
// larger ones as base64 of their little-endian bytes.
constexpr int64_t kMaxInlineElements = 16;

// Shortest text that reads back to exactly `value` ("1.0", "1e-05", "nan",
// "-inf"); always recognisably a float (never "1").
std::string double_text(double value);

// An attribute value in text form: None, True, 3, 0.5, "NCHW", [1, 2], [0.5].
std::string attr_value_text(const AttrValue& value);

// The text form of a constant: a scalar literal (2f, 3, 3i64, 2f16, True,
// nanf), an inline tensor (Tensor[(2), float32]{1, 2}) or base64
// (Tensor[(32), float32]{b64"..."}). Reads back bit-exactly.
std::string constant_text(const NDArray& data);

std::string base64_encode(const void* data, size_t size);
// Decodes standard padded base64; nullopt on malformed text.
std::optional<std::string> base64_decode(std::string_view text);

// A scalar literal as in constant_text ("2f", "-3i64", "nanbf16"); on
// malformed text returns an empty array and sets `error`.
NDArray parse_scalar_literal(std::string_view text, std::string* error);

// Stores element `index` of `array` from its text (a number, "nan", "-inf",
// True/False); returns an error message, or "" on success.
std::string set_element_from_text(NDArray& array, int64_t index, std::string_view text);

// Whether `text` is a number without fraction or exponent ("12", "-3").
bool is_integer_text(std::string_view text);

}  // namespace switchyard
