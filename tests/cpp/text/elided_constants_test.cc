// Printing without weights: constants over kMaxInlineElements elements are
// written as meta[Constant][i] with their type, the text says at its top
// that it does not parse back, and the parser refuses it naming the remedy.
#include <gtest/gtest.h>

#include "op/registry.h"
#include "support/error.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard {
namespace elided_constants_test {

Constant filled(std::vector<int64_t> shape, double value) {
  NDArray data(DType::kFloat32, shape);
  for (int64_t i = 0; i < data.numel(); ++i) data.set_from_double(i, value);
  return make_constant(std::move(data));
}

IRModule two_functions_sharing_a_weight() {
  Constant weight = filled({4, 8}, 0.5);
  Var x = make_var("x", tensor_type({1, 8}, DType::kFloat32));
  Var y = make_var("y", tensor_type({1, 8}, DType::kFloat32));
  IRModule m;
  m.add("main", make_function({x}, make_op_call("add", {make_op_call("nn.dense", {x, weight}), filled({4}, 1)})));
  m.add("other", make_function({y}, make_op_call("nn.dense", {make_op_call("add", {y, filled({3, 8}, 2)}), weight})));
  return m;
}

constexpr PrintOptions kWithoutWeights{.show_weights = false};

TEST(ElidedConstants, LargeConstantsBecomeNumberedReferencesWithTheirType) {
  std::string text = print_module(two_functions_sharing_a_weight(), kWithoutWeights);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "# meta[Constant][i]: constants over 16 elements are elided; this text does not parse back (print "
            "with show_weights=True, or --show-weights, for the full text)");
  EXPECT_NE(text.find("nn.dense(%x, meta[Constant][0] /* Tensor[(4, 8), float32] */)"), std::string::npos) << text;
  // The second function's own constant is the next number; the shared weight keeps its number.
  EXPECT_NE(text.find("add(%y, meta[Constant][1] /* Tensor[(3, 8), float32] */)"), std::string::npos) << text;
  EXPECT_NE(text.find("nn.dense(%0, meta[Constant][0] /* Tensor[(4, 8), float32] */)"), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor[(4), float32]{1, 1, 1, 1}"), std::string::npos) << "small constants stay inline";
  EXPECT_EQ(text.find("b64"), std::string::npos);
}

TEST(ElidedConstants, FullTextByDefaultAndWhenNothingIsLarge) {
  IRModule m = two_functions_sharing_a_weight();
  std::string full = print_module(m);
  EXPECT_EQ(full.find("meta["), std::string::npos);
  EXPECT_EQ(full.find('#'), std::string::npos);
  EXPECT_NE(full.find("b64"), std::string::npos);
  Var x = make_var("x", tensor_type({4}, DType::kFloat32));
  Expr small = make_op_call("add", {x, filled({4}, 1)});
  EXPECT_EQ(print_expr(small, kWithoutWeights), print_expr(small)) << "no header when nothing is elided";
}

TEST(ElidedConstants, AnExpressionSaysItToo) {
  std::string text = print_expr(filled({17}, 3), kWithoutWeights);
  EXPECT_EQ(text.substr(text.find('\n') + 1), "meta[Constant][0] /* Tensor[(17), float32] */");
}

TEST(ElidedConstants, TheParserRefusesElidedTextNamingTheRemedy) {
  std::string text = print_module(two_functions_sharing_a_weight(), kWithoutWeights);
  try {
    parse_module(text, "elided.sy");
    FAIL() << "elided text parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kParse);
    EXPECT_NE(e.message().find("meta[Constant][0] is a constant the printer elided"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("show_weights=True"), std::string::npos) << e.message();
    EXPECT_EQ(e.span().line(), 3u) << e.render();
  }
  // The full text of the same module parses back.
  EXPECT_NO_THROW(parse_module(print_module(two_functions_sharing_a_weight()), "full.sy"));
}

}  // namespace elided_constants_test
}  // namespace switchyard
