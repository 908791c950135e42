// Resource limits and bounded messages: a tensor type whose size overflows
// int64 is refused (by the type constructor, the parser and type inference)
// with an error naming where; a constant is checked against its text before
// anything is allocated; an error quotes at most a line's worth of input.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>

#include "runtime/ndarray.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace resource_limits_test {

// The Error that parsing and then type-checking `text` throws; the text is
// registered, as parse_file does, so the rendered error quotes its line.
Error check_error(const std::string& text) {
  register_source_text("limits.sy", text);
  try {
    infer_type(parse_module(text, "limits.sy"));
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "the module was accepted:\n" << text.substr(0, 300);
  return Error(ErrorKind::kUsage, "");
}

// The process's peak resident memory so far, in bytes.
int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t(usage.ru_maxrss) * 1024;
}

TEST(ResourceLimitsTest, TensorTypesWhoseSizeOverflowsAreRefused) {
  EXPECT_EQ(tensor_type({int64_t(1) << 30, 4}, DType::kInt64)->nbytes(), int64_t(1) << 35);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{int64_t(1) << 32, int64_t(1) << 32},
                                     std::vector<int64_t>{int64_t(1) << 62, int64_t(1) << 62},
                                     std::vector<int64_t>{int64_t(1) << 62}}) {  // 2^62 elements fit, 2^64 bytes do not
    try {
      tensor_type(shape, DType::kFloat32);
      ADD_FAILURE() << "accepted a shape of " << shape.size() << " dimensions";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kType);
      EXPECT_NE(e.message().find("is too large: its size in bytes overflows int64"), std::string::npos) << e.message();
    }
  }
  EXPECT_THROW(tensor_type({2, -1}, DType::kFloat32), Error);
  EXPECT_THROW(tensor_type(std::vector<int64_t>(kMaxTensorRank + 1, 1), DType::kFloat32), Error);
}

TEST(ResourceLimitsTest, TheParserNamesAnOverflowingType) {
  Error e = check_error("def @main(%x: Tensor[(4294967296, 4294967296), float32]) {\n  %x\n}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kParse);
  EXPECT_EQ(e.span().to_string(), "limits.sy:1:15");
  EXPECT_NE(e.message().find("Tensor[(4294967296, 4294967296), float32] is too large"), std::string::npos);
}

TEST(ResourceLimitsTest, AReshapeWhoseProductWrapsIsATypeError) {
  // 6 * 7 * 7905747460161236407 wraps to 6 in int64.
  Error e = check_error(
      "def @main(%x: Tensor[(6), float32]) {\n"
      "  reshape(%x, newshape=[6, 7, 7905747460161236407])\n"
      "}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kType);
  EXPECT_EQ(e.span().to_string(), "limits.sy:2:3");
  EXPECT_NE(e.message().find("its element count overflows int64"), std::string::npos) << e.message();
  // The same with -1: the known part alone overflows.
  EXPECT_NE(check_error("def @main(%x: Tensor[(6), float32]) {\n"
                        "  reshape(%x, newshape=[-1, 4294967296, 4294967296])\n"
                        "}\n")
                .message()
                .find("overflows int64"),
            std::string::npos);
}

TEST(ResourceLimitsTest, ShapeArithmeticInRelationsIsChecked) {
  // Each field fits; their concatenation does not.
  Error concat = check_error(
      "def @main(%a: Tensor[(4611686018427387904), int8], %b: Tensor[(4611686018427387904), int8]) {\n"
      "  concatenate((%a, %b))\n"
      "}\n");
  EXPECT_NE(concat.message().find("overflows int64"), std::string::npos) << concat.message();
  EXPECT_EQ(concat.span().to_string(), "limits.sy:2:3");
  // Padding that overflows the padded extent.
  Error pool = check_error(
      "def @main(%x: Tensor[(1, 1, 4, 4), float32]) {\n"
      "  nn.max_pool2d(%x, pool_size=[2, 2], padding=[9223372036854775807, 0])\n"
      "}\n");
  EXPECT_NE(pool.message().find("overflows int64"), std::string::npos) << pool.message();
  // num_newaxis would otherwise build a shape of a billion dimensions first.
  Error expand = check_error(
      "def @main(%x: Tensor[(2), float32]) {\n"
      "  expand_dims(%x, axis=0, num_newaxis=1000000000)\n"
      "}\n");
  EXPECT_NE(expand.message().find("more than 64 dimensions"), std::string::npos) << expand.message();
}

TEST(ResourceLimitsTest, AConstantIsCheckedAgainstItsTextBeforeAllocation) {
  // 2 GB of float32 declared by a 60-byte file: refused without allocating it.
  int64_t before = peak_resident_bytes();
  Error e = check_error("def @main() {\n  Tensor[(500000000), float32]{}\n}\n");
  EXPECT_LT(peak_resident_bytes() - before, int64_t(256) << 20);
  EXPECT_EQ(e.kind(), ErrorKind::kParse);
  EXPECT_EQ(e.span().to_string(), "limits.sy:2:32");
  EXPECT_NE(e.message().find("needs 500000000 elements, found 0"), std::string::npos) << e.message();

  // 10^15 elements: a clear error with a position, not std::bad_alloc.
  Error huge = check_error("def @main() {\n  Tensor[(1000000000000000), float32]{b64\"AAAAAA==\"}\n}\n");
  EXPECT_EQ(huge.span().to_string(), "limits.sy:2:42");
  EXPECT_NE(huge.message().find("base64 data has 4 bytes"), std::string::npos) << huge.message();

  // Constants that fit still read back.
  IRModule mod = parse_module("def @main() {\n  Tensor[(2), int32]{7, -3}\n}\n", "limits.sy");
  EXPECT_NO_THROW(infer_type(mod));
}

TEST(ResourceLimitsTest, ArraysBeyondPhysicalMemoryAreRefusedBeforeAllocation) {
  try {
    NDArray(DType::kFloat32, {int64_t(1) << 50});
    FAIL() << "allocated 4 PiB";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate a float32 array of shape (1125899906842624): it needs "
                                         "4503599627370496 bytes (4.0 PiB), more than this machine's"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(NDArray(DType::kInt64, {int64_t(1) << 62, 4}), RuntimeError);
}

TEST(ResourceLimitsTest, AHugeAttributeIsQuotedAsOneLine) {
  // A 2 MB string attribute with a value the operator does not take.
  std::string value(2'000'000, 'A');
  Error e = check_error("def @main(%x: Tensor[(4), float32], %i: Tensor[(2), int32]) {\n  take(%x, %i, mode=\"" +
                        value + "\")\n}\n");
  EXPECT_LT(e.message().size(), 1000u) << e.message().substr(0, 300);
  EXPECT_LT(std::string(e.what()).size(), 1500u);
  EXPECT_NE(e.message().find("more characters"), std::string::npos);

  // A 2 MB list attribute quoted in a type error.
  std::string list = "[1";
  for (int i = 0; i < 500'000; ++i) list += ", 1";
  Error reshape = check_error("def @main(%x: Tensor[(6), float32]) {\n  reshape(%x, newshape=" + list + "])\n}\n");
  EXPECT_LT(std::string(reshape.what()).size(), 1500u) << reshape.message().substr(0, 300);

  // A 2 MB token the parser does not expect.
  Error token = check_error("def @main() {\n  " + std::string(2'000'000, 'z') + "\n}\n");
  EXPECT_LT(std::string(token.what()).size(), 1500u);
}

TEST(ResourceLimitsTest, ALongSourceLineIsQuotedAroundTheCaret) {
  // The error is at column 5003 of a 10,000-character line.
  std::string padding(5000, ' ');
  Error e = check_error("def @main(%x: Tensor[(2), float32]) {\n  " + padding + "nope(%x)" + padding + "\n}\n");
  std::string rendered = e.what();
  EXPECT_LT(rendered.size(), 1000u);
  size_t line_start = rendered.find("\n  ") + 3;
  size_t caret_line = rendered.find('\n', line_start) + 3;
  size_t caret = rendered.find('^', caret_line);
  ASSERT_NE(caret, std::string::npos) << rendered;
  // The character above the caret starts the unknown operator.
  EXPECT_EQ(rendered.substr(line_start + (caret - caret_line), 4), "nope") << rendered;
  EXPECT_EQ(rendered.substr(line_start, 3), "...");
}

TEST(ResourceLimitsTest, EveryMessageIsBounded) {
  Error e(ErrorKind::kUsage, std::string(1'000'000, 'x'));
  EXPECT_LE(e.message().size(), kMostMessageChars + 40);
  EXPECT_NE(e.message().find("more characters"), std::string::npos);
}

}  // namespace resource_limits_test
}  // namespace switchyard
