// The ONNX converter table's versions: every operator converts the version
// each importable opset selects, or refuses it on purpose, saying why; a
// model's opset picks the newest version at or below it; an opset that
// predates an operator names the opset that added it, unless the operator
// is converted there on purpose.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "frontend/onnx/converters.h"

namespace switchyard {
namespace onnx_versions_test {

TEST(OnnxVersions, EveryOpsetSelectsAConvertedOrDeliberatelyRefusedVersion) {
  std::vector<OnnxOperatorSupport> all = onnx_operator_support();
  ASSERT_GT(all.size(), 100u);
  for (const OnnxOperatorSupport& op : all) {
    ASSERT_FALSE(op.versions.empty()) << op.op_type;
    EXPECT_LE(op.versions.back().first, kNewestOnnxOpset) << op.op_type;
    for (int opset = kFullyConvertedOnnxOpset; opset <= kNewestOnnxOpset; ++opset) {
      std::optional<OnnxOperatorVersion> v = find_onnx_converter(op.op_type, opset);
      ASSERT_TRUE(v) << op.op_type;
      if (v->version == 0) {  // the operator came later
        EXPECT_LT(opset, op.versions.front().first) << op.op_type;
        continue;
      }
      // A version below the first converter is refused only by accident:
      // each row must convert what opset 7 selects or say why not.
      EXPECT_EQ(v->refusal.find("is not supported (Switchyard converts"), std::string::npos)
          << op.op_type << " at opset " << opset << ": " << v->refusal;
    }
  }
}

// Below opset 7 a version converts where it is the one opset 7 selects too,
// so its converter is the one opset 7's models exercise (or where the
// operator converts before ONNX added it on purpose), or where the row has
// a converter of the old version's own meaning (converters_legacy.cc); any
// other older version is refused naming the opset and the way out.
TEST(OnnxVersions, BeforeOpset7OnlyTheVersionsOpset7SelectsOrTheirOwnConvertersConvert) {
  const std::set<std::string> own_meaning{"Add", "Sub",  "Mul",  "Div",  "Pow",   "Equal", "Less",
                                          "Greater", "And", "Or", "Xor", "Gemm", "PRelu", "BatchNormalization",
                                          "AveragePool"};
  int converted = 0;
  for (const OnnxOperatorSupport& op : onnx_operator_support()) {
    std::optional<OnnxOperatorVersion> at7 = find_onnx_converter(op.op_type, kFullyConvertedOnnxOpset);
    for (int opset = kOldestOnnxOpset; opset < kFullyConvertedOnnxOpset; ++opset) {
      std::optional<OnnxOperatorVersion> v = find_onnx_converter(op.op_type, opset);
      ASSERT_TRUE(v && at7) << op.op_type;
      if (!v->convert) continue;
      ++converted;
      if (v->version == 0) continue;  // converted before ONNX added it (LayerNormalization)
      if (own_meaning.count(op.op_type))
        EXPECT_LT(v->version, at7->version) << op.op_type << " at opset " << opset;
      else
        EXPECT_EQ(v->version, at7->version) << op.op_type << " at opset " << opset;
    }
  }
  EXPECT_GT(converted, 100);
  EXPECT_TRUE(find_onnx_converter("Elu", 6)->convert);
  EXPECT_TRUE(find_onnx_converter("GlobalAveragePool", 1)->convert);
  EXPECT_TRUE(find_onnx_converter("Add", 6)->convert);
  std::optional<OnnxOperatorVersion> abs = find_onnx_converter("Abs", 5);  // Abs-1's consumed_inputs
  EXPECT_FALSE(abs->convert);
  EXPECT_EQ(abs->version, 1);
  EXPECT_EQ(abs->refusal,
            "Abs-1 (opset 5) is not supported (Switchyard converts Abs from version 6; convert the model to opset 7 or "
            "newer with onnx.version_converter)");
}

TEST(OnnxVersions, AnOpsetSelectsTheNewestVersionAtOrBelowIt) {
  EXPECT_EQ(find_onnx_converter("Softmax", 7)->version, 1);
  EXPECT_EQ(find_onnx_converter("Softmax", 12)->version, 11);
  EXPECT_EQ(find_onnx_converter("Softmax", 13)->version, 13);
  EXPECT_EQ(find_onnx_converter("Softmax", 21)->version, 13);
  EXPECT_EQ(find_onnx_converter("ReduceMean", 17)->version, 13);
  EXPECT_EQ(find_onnx_converter("ReduceMean", 18)->version, 18);
  EXPECT_EQ(find_onnx_converter("Split", 18)->version, 18);
  EXPECT_TRUE(find_onnx_converter("Add", 7)->convert);
  EXPECT_FALSE(find_onnx_converter("NoSuchOperator", 13));
}

TEST(OnnxVersions, RefusalsNameTheVersionAndTheOpset) {
  std::optional<OnnxOperatorVersion> upsample = find_onnx_converter("Upsample", 11);
  ASSERT_TRUE(upsample);
  EXPECT_EQ(upsample->version, 10);
  EXPECT_FALSE(upsample->convert);
  EXPECT_EQ(upsample->refusal.rfind("Upsample-10 (opset 11) is deprecated", 0), 0u) << upsample->refusal;
  EXPECT_TRUE(find_onnx_converter("Upsample", 9)->convert);

  std::optional<OnnxOperatorVersion> gelu = find_onnx_converter("Gelu", 17);
  EXPECT_EQ(gelu->version, 0);
  EXPECT_FALSE(gelu->convert);
  EXPECT_EQ(gelu->refusal, "Gelu is not in opset 17 (ONNX added it in opset 20)");
  EXPECT_TRUE(find_onnx_converter("Gelu", 20)->convert);
}

TEST(OnnxVersions, LayerNormalizationConvertsBeforeOnnxAddedIt) {
  // ONNX Runtime's LayerNormalization, in the default domain before opset 17.
  std::optional<OnnxOperatorVersion> early = find_onnx_converter("LayerNormalization", 13);
  ASSERT_TRUE(early && early->convert);
  EXPECT_EQ(early->version, 0);
  EXPECT_EQ(early->name, "LayerNormalization at opset 13, before ONNX added it in opset 17");
  EXPECT_EQ(find_onnx_converter("LayerNormalization", 17)->name, "LayerNormalization-17, the version in opset 17");
}

}  // namespace onnx_versions_test
}  // namespace switchyard
