// The text parser's values: types ("Tensor[(2, 3), float32]", tuples,
// function types), tensor literals ("Tensor[(2), float32]{1, 2}", base64
// data) and attribute values (numbers, strings, True/False/None, lists).
// Each reads from the cursor and fails at the offending token.
#pragma once

#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/type.h"
#include "text/token_cursor.h"

namespace switchyard {

Type parse_type(TokenCursor& in);
// One dimension of a tensor type: a product of non-negative integers and
// variables, each variable with an optional bound ("n", "n<=64", "196*n").
DimExpr parse_dim(TokenCursor& in);
// After '(': "T, U, ...)".
std::vector<Type> parse_type_list(TokenCursor& in);
DType parse_dtype_token(TokenCursor& in, const Token& t);
Expr parse_tensor_literal(TokenCursor& in);
AttrValue parse_attr_value(TokenCursor& in);

}  // namespace switchyard
