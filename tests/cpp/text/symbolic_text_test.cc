// Symbolic dimensions in the text format: a variable where a number was,
// "n<=64" for a bound, "196*n" for a product; print -> parse round-trips.
#include <gtest/gtest.h>

#include "ir/structural_equal.h"
#include "support/error.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard {
namespace symbolic_text_test {

constexpr const char* kModule = R"(def @main(%x: Tensor[(n<=64, 196, 768), float32], %y: Tensor[(196*n<=64, 2), float16],
          %z: Tensor[(n<=64*m, 3), float32]) -> Tensor[(n<=64, 196, 768), float32] {
  %x
}
)";

std::string parse_error(const std::string& text) {
  try {
    parse_module(text, "t.sy");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kParse);
    return e.span().to_string() + ": " + e.message();
  }
  ADD_FAILURE() << "parsed: " << text;
  return "";
}

TEST(SymbolicText, ParsesVariablesBoundsAndProducts) {
  IRModule m = parse_module(kModule, "t.sy");
  const Function& main = m.lookup("main");
  const TensorTypeNode* x = as_tensor(main->params[0]->type_annotation);
  ASSERT_NE(x, nullptr);
  EXPECT_FALSE(x->is_static());
  const DimVar* n = dim_var("n", 64);
  EXPECT_EQ(x->dims, (std::vector<DimExpr>{DimExpr(n), 196, 768}));
  const TensorTypeNode* y = as_tensor(main->params[1]->type_annotation);
  EXPECT_EQ(y->dims[0], DimExpr(196) * DimExpr(n));
  EXPECT_EQ(y->dims[0].upper_bound(), 196 * 64);
  const TensorTypeNode* z = as_tensor(main->params[2]->type_annotation);
  EXPECT_EQ(z->dims[0], DimExpr(dim_var("m")) * DimExpr(n));
  EXPECT_TRUE(type_equal(main->ret_type, main->params[0]->type_annotation));
}

TEST(SymbolicText, PrintParseRoundTrips) {
  IRModule m = parse_module(kModule, "t.sy");
  std::string text = print_module(m);
  EXPECT_NE(text.find("%x: Tensor[(n<=64, 196, 768), float32]"), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor[(196*n<=64, 2), float16]"), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor[(m*n<=64, 3), float32]"), std::string::npos) << text;  // canonical order
  IRModule again = parse_module(text, "again.sy");
  EXPECT_TRUE(structural_equal(m, again));
  EXPECT_EQ(print_module(again), text);
}

TEST(SymbolicText, DifferentVariablesAreDifferentTypes) {
  IRModule n = parse_module("def @main(%x: Tensor[(n, 3), float32]) { %x }", "n.sy");
  IRModule m = parse_module("def @main(%x: Tensor[(m, 3), float32]) { %x }", "m.sy");
  IRModule bounded = parse_module("def @main(%x: Tensor[(n<=8, 3), float32]) { %x }", "b.sy");
  EXPECT_TRUE(structural_equal(n, parse_module("def @main(%y: Tensor[(n, 3), float32]) { %y }", "y.sy")));
  EXPECT_FALSE(structural_equal(n, m));
  EXPECT_FALSE(structural_equal(n, bounded));
}

TEST(SymbolicText, BadDimensionsNameTheToken) {
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n<=-1, 3), float32]) { %x }"),
            "t.sy:1:26: expected a bound (a non-negative integer), found '-1'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n<=m, 3), float32]) { %x }"),
            "t.sy:1:26: expected a number, found 'm'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n*, 3), float32]) { %x }"),
            "t.sy:1:25: expected a dimension (a non-negative integer or a variable such as n), found ','");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n.k, 3), float32]) { %x }"),
            "t.sy:1:23: a dimension variable's name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got 'n.k'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n<=8), float32]) -> Tensor[(n), float32] { %x }"),
            "t.sy:1:51: dimension variable n was written n<=8 at t.sy:1:23; a variable has one bound, written at "
            "every use");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n), float32]) {\n  let %y: Tensor[(2*n<=4), float32] = %x;\n  %y\n}"),
            "t.sy:2:21: dimension variable n<=4 was written n at t.sy:1:23; a variable has one bound, written at "
            "every use");
  EXPECT_EQ(parse_error("def @main() { Tensor[(n), float32]{1} }"),
            "t.sy:1:15: a tensor literal needs a static shape, got Tensor[(n), float32]");
}

}  // namespace symbolic_text_test
}  // namespace switchyard
