// support/identifier.h: the one rule for names made identifiers, as the C++
// generator, the kernel namer and the text printer use it.
#include <gtest/gtest.h>

#include "support/identifier.h"

namespace switchyard {
namespace identifier_test {

TEST(Identifier, OtherCharactersBecomeUnderscores) {
  EXPECT_EQ(identifier_chars("nn.dense"), "nn_dense");
  EXPECT_EQ(identifier_chars("onnx::Gemm_12/out-0"), "onnx__Gemm_12_out_0");
  EXPECT_EQ(identifier_chars("x\xc3\xa9"), "x__");  // each byte of a UTF-8 letter
  EXPECT_EQ(identifier_chars(""), "");
  EXPECT_EQ(identifier_chars("12"), "12");
  EXPECT_TRUE(is_identifier_char('_') && is_identifier_char('Z') && is_identifier_char('7'));
  EXPECT_FALSE(is_identifier_char('.') || is_identifier_char(' ') || is_identifier_char('\xc3'));
}

TEST(Identifier, APrefixMakesItAValidCIdentifier) {
  EXPECT_EQ(c_identifier("dense", "v"), "dense");
  EXPECT_EQ(c_identifier("3x", "v"), "v3x");
  EXPECT_EQ(c_identifier("", "_"), "_");
  EXPECT_EQ(c_identifier("0.weight", "_"), "_0_weight");
  EXPECT_EQ(c_identifier("", "kernel"), "kernel");
}

}  // namespace identifier_test
}  // namespace switchyard
