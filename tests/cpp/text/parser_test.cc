// The parser: spans, scoping, sharing, hand-written forms and the exact
// position and message of each class of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op/registry.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard {
namespace parser_test {

IRModule parse_forms() { return parse_file(testing::example_models_dir() + "/forms.sy"); }

std::string where(const Expr& e) { return e->span().to_string(); }

TEST(Parser, EveryNodeGetsTheSpanOfItsFirstToken) {
  IRModule m = parse_forms();
  std::string file = testing::example_models_dir() + "/forms.sy";
  auto at = [&](int line, int column) { return file + ":" + std::to_string(line) + ":" + std::to_string(column); };
  const Function& scale = m.lookup("scale");
  EXPECT_EQ(where(scale), at(5, 1));
  EXPECT_EQ(where(scale->params[0]), at(5, 12));
  EXPECT_EQ(where(scale->params[1]), at(5, 38));
  EXPECT_EQ(where(scale->body), at(6, 3));
  const Function& twice = m.lookup("twice");
  auto* outer = as<CallNode>(twice->body);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(where(twice->body), at(11, 3));
  EXPECT_EQ(where(outer->args[0]), at(11, 6));
  const Function& main = m.lookup("main");
  auto* let = as<LetNode>(main->body);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(where(main->body), at(19, 3));
  EXPECT_EQ(where(let->var), at(19, 7));
  EXPECT_EQ(where(let->value), at(19, 12));
  auto* branch = as<IfNode>(let->value);
  EXPECT_EQ(where(branch->else_branch), at(22, 5));
  auto* add = as<CallNode>(branch->else_branch);
  EXPECT_EQ(where(add->args[1]), at(22, 13));  // the constant 1f
  auto* result = as<TupleNode>(let->body);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(where(let->body), at(31, 3));
  auto* copy = as<CallNode>(result->fields[1]);
  EXPECT_EQ(where(result->fields[1]), at(30, 8));
  EXPECT_EQ(where(copy->args[0]), at(29, 8));  // %5.1: its first token
  auto* projection = as<TupleGetItemNode>(copy->args[0]);
  EXPECT_EQ(projection->index, 1);
  EXPECT_EQ(where(projection->tuple), at(28, 8));
  auto* call_of_fn = as<CallNode>(as<TupleNode>(projection->tuple)->fields[1]);
  EXPECT_EQ(where(call_of_fn->op), at(24, 8));
  EXPECT_EQ(VirtualDevice::parse("device=\"cpu:0\", scope=\"global\""), main->params[0]->virtual_device());
}

TEST(Parser, GraphBindingsShareNodesAndAttributesAreComplete) {
  IRModule m = parse_forms();
  auto* let = as<LetNode>(m.lookup("main")->body);
  auto* branch = as<IfNode>(let->value);
  // %2 is used in both branches: one node.
  EXPECT_TRUE(as<CallNode>(branch->then_branch)->args[0].same_as(as<CallNode>(branch->else_branch)->args[0]));
  auto* twice_call = as<CallNode>(as<CallNode>(branch->then_branch)->args[0]);
  auto* scale_call = as<CallNode>(twice_call->args[1]);
  auto* sum = as<CallNode>(scale_call->args[0]);
  EXPECT_EQ(sum->attrs->get_ints("axis"), std::vector<int64_t>{0});
  EXPECT_FALSE(sum->attrs->get_bool("keepdims"));  // filled from the default
  EXPECT_TRUE(is<FunctionNode>(twice_call->args[0]));
}

TEST(Parser, HandWrittenForms) {
  IRModule m = parse_module(
      "def @main(%x: Tensor[(2), float32] @cpu:1, %t: ((float32, int64), bool)) {\n"
      "  %0 = %t.0.1;  # nested projections\n"
      "  %1 = (%x,);\n"
      "  %2 = {\n"
      "    let @{} %v: Tensor[(2), float32] @cpu:0 = negative(%x) @cpu:1;\n"
      "    exp(%v)\n"
      "  };\n"
      "  %3 = Tensor[(2), float32]{1.5, -inf};\n"
      "  %4 = Tensor[(2), int8]{b64\"AQI=\"};\n"
      "  (%0, %1, %2, add(%3, 2.5), %4, -nanbf16, 7u8)\n"
      "}\n",
      "hand.sy");
  auto* result = as<TupleNode>(m.lookup("main")->body);
  ASSERT_NE(result, nullptr);
  auto* outer = as<TupleGetItemNode>(result->fields[0]);
  EXPECT_EQ(outer->index, 1);
  EXPECT_EQ(as<TupleGetItemNode>(outer->tuple)->index, 0);
  EXPECT_EQ(as<TupleNode>(result->fields[1])->fields.size(), 1u);
  auto* let = as<LetNode>(result->fields[2]);
  ASSERT_NE(let, nullptr);
  EXPECT_TRUE(let->virtual_device()->is_fully_unconstrained());
  EXPECT_EQ(let->var->virtual_device(), VirtualDevice::for_device(DeviceKind::kCPU, 0));
  EXPECT_EQ(let->value->virtual_device(), VirtualDevice::for_device(DeviceKind::kCPU, 1));
  const NDArray& inline_tensor = as<ConstantNode>(as<CallNode>(result->fields[3])->args[0])->data;
  EXPECT_EQ(inline_tensor.as<float>()[0], 1.5f);
  EXPECT_EQ(inline_tensor.as<float>()[1], -INFINITY);
  const NDArray& decimal = as<ConstantNode>(as<CallNode>(result->fields[3])->args[1])->data;
  EXPECT_EQ(decimal.dtype(), DType::kFloat32);  // an unsuffixed fraction is float32
  const NDArray& decoded = as<ConstantNode>(result->fields[4])->data;
  EXPECT_EQ(decoded.as<int8_t>()[0], 1);
  EXPECT_EQ(decoded.as<int8_t>()[1], 2);
  const NDArray& nan = as<ConstantNode>(result->fields[5])->data;
  EXPECT_EQ(nan.dtype(), DType::kBFloat16);
  EXPECT_EQ(nan.as<uint16_t>()[0], 0xffc0);
  EXPECT_EQ(as<ConstantNode>(result->fields[6])->data.dtype(), DType::kUInt8);
}

TEST(Parser, NamesAreVisibleInNestedBlocksAndReusableInSiblingBlocks) {
  IRModule m = parse_module(
      "def @main(%c: bool, %x: float32) {\n"
      "  if (%c) { %0 = negative(%x); %0 } else { %0 = exp(%x); let %y = %0; %y }\n"
      "}\n",
      "scopes.sy");
  auto* branch = as<IfNode>(m.lookup("main")->body);
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(as<CallNode>(branch->then_branch)->args[0].same_as(m.lookup("main")->params[1]));
}

// Parses `text` (registered so the error quotes the line) and returns the error.
Error parse_error(const std::string& text) {
  register_source_text("bad.sy", text);
  try {
    parse_module(text, "bad.sy");
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::kUsage, "no error");
}

void expect_error(const std::string& text, const std::string& position, const std::string& message) {
  Error e = parse_error(text);
  EXPECT_EQ(e.kind(), ErrorKind::kParse) << e.render();
  EXPECT_EQ(e.span().to_string(), "bad.sy:" + position) << e.render();
  EXPECT_EQ(e.message(), message);
}

TEST(ParserErrors, SyntaxError) {
  expect_error("def @main(%x: float32) {\n  add(%x %x)\n}\n", "2:10", "expected ')', found '%x'");
  expect_error("def @main(%x: float32) {\n  %x\n", "3:1", "expected '}', found end of input");
  expect_error("def @main(%x: Tensor[(2), float33]) {\n  %x\n}\n", "1:27", "unknown type 'float33'");
  expect_error("def @main() {\n  3q\n}\n", "2:3",
               "unknown literal suffix 'q' in '3q' "
               "(expected f, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32 or u64)");
  expect_error("def @main() {\n  300i8\n}\n", "2:3", "'300' is out of range for int8");
  expect_error("def @main() {\n  -1u64\n}\n", "2:3", "'-1' is out of range for uint64");
  expect_error("def @main() {\n  18446744073709551616u64\n}\n", "2:3",
               "'18446744073709551616' is out of range for uint64");
  expect_error("def @main() {\n  65536u16\n}\n", "2:3", "'65536' is out of range for uint16");
  expect_error("def @main() {\n  1.5u32\n}\n", "2:3",
               "'1.5u32': an integer literal cannot have a fraction, exponent, nan or inf");
  expect_error("def @main() {\n  Tensor[(3), float32]{1, 2}\n}\n", "2:28", "Tensor[(3), float32] needs 3 elements, found 2");
}

TEST(ParserErrors, UnknownOperator) {
  expect_error("def @main(%x: float32) {\n  %0 = relu(%x);\n  %0\n}\n", "2:8",
               "unknown operator 'relu' (did you mean 'nn.relu'?)");
  expect_error("def @main(%x: float32) {\n  frobnicate(%x)\n}\n", "2:3", "unknown operator 'frobnicate'");
}

TEST(ParserErrors, BadAttribute) {
  expect_error("def @main(%x: float32) {\n  nn.softmax(%x, axes=0)\n}\n", "2:18",
               "operator 'nn.softmax' has no attribute 'axes' (it takes: axis)");
  expect_error("def @main(%x: float32) {\n  on_device(%x)\n}\n", "2:3",
               "operator 'on_device' requires attribute 'device' (a device string)");
  expect_error("def @main(%x: float32) {\n  cast(%x, dtype=\"float99\")\n}\n", "2:12",
               "attribute 'dtype': unknown dtype \"float99\"");
}

// An attribute value is checked where the call is built, so the parser
// refuses it at the call: a wrong kind at the attribute, a wrong length or a
// value no input could take (a dimension named twice, k of 0) at the
// operator. Whether an axis is in range needs the input's rank, which the
// type relation checks at the same span (transform/infer_type_test.cc).
TEST(ParserErrors, AttributeValuesAreCheckedWhereTheCallIsBuilt) {
  expect_error("def @main(%x: float32) {\n  nn.softmax(%x, axis=1.5)\n}\n", "2:18",
               "attribute 'axis' of 'nn.softmax' must be an integer, got 1.5");
  expect_error("def @main(%x: float32) {\n  nn.max_pool2d(%x, pool_size=[2, 2, 2])\n}\n", "2:3",
               "'nn.max_pool2d': pool_size must have 1 or 2 values, got [2, 2, 2]");
  expect_error("def @main(%x: float32) {\n  transpose(%x, axes=[0, 2])\n}\n", "2:3",
               "'transpose': axes [0, 2] is not a permutation of 0..1");
  expect_error("def @main(%x: float32) {\n  sum(%x, axis=[0, 0])\n}\n", "2:3", "'sum': axis [0, 0] names 0 twice");
  expect_error("def @main(%x: float32) {\n  squeeze(%x, axis=[1, 1])\n}\n", "2:3",
               "'squeeze': axis [1, 1] names 1 twice");
  expect_error("def @main(%x: float32) {\n  topk_indices(%x, k=0)\n}\n", "2:3",
               "'topk_indices': k must be at least 1, got 0");
}

TEST(ParserErrors, UndefinedVariable) {
  expect_error("def @main(%x: float32) {\n  %0 = negative(%x);\n  add(%0, %z)\n}\n", "3:11", "undefined variable %z");
  // A name bound in one branch is not visible in the other.
  expect_error("def @main(%c: bool) {\n  if (%c) { %0 = 1f; %0 } else { %0 }\n}\n", "2:34", "undefined variable %0");
}

TEST(ParserErrors, NameBoundTwice) {
  expect_error("def @main(%x: float32) {\n  %0 = negative(%x);\n  %0 = exp(%x);\n  %0\n}\n", "3:3",
               "%0 is already bound at bad.sy:2:3");
  expect_error("def @main(%x: float32) {\n  %f = fn (%x: float32) { %x };\n  %f\n}\n", "2:12",
               "%x is already bound at bad.sy:1:11");
}

TEST(ParserErrors, MalformedDevice) {
  expect_error("def @main(%x: float32 @cpu:x) {\n  %x\n}\n", "1:23",
               "malformed device \"cpu:x\": device id 'x' is not a non-negative integer");
  expect_error("def @main(%x: float32) {\n  negative(%x) @{device=\"tpu:0\"}\n}\n", "2:16",
               "malformed device \"device=\"tpu:0\"\": unknown device kind 'tpu' (expected cpu or cuda)");
  expect_error("def @main(%x: float32) {\n  %x @cpu:0\n}\n", "2:6",
               "a device must follow the expression it places, not a reference to a value bound elsewhere");
}

TEST(ParserErrors, RenderingQuotesTheLineWithACaret) {
  Error e = parse_error("def @main(%x: float32) {\n  add(%x, %nope)\n}\n");
  EXPECT_EQ(e.render(),
            "bad.sy:2:11: parse error: undefined variable %nope\n"
            "    add(%x, %nope)\n"
            "            ^");
}

TEST(ParserErrors, UnreadableFileIsAUsageError) {
  try {
    parse_file("/nonexistent/model.sy");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("/nonexistent/model.sy"), std::string::npos);
  }
}

TEST(ParserErrors, DuplicateAndUndefinedFunctions) {
  expect_error("def @f() {\n  1f\n}\ndef @f() {\n  2f\n}\n", "4:5", "function @f is defined twice (first at bad.sy:1:5)");
  expect_error("def @main() {\n  @g()\n}\n", "2:3", "undefined function @g");
}

}  // namespace parser_test
}  // namespace switchyard
