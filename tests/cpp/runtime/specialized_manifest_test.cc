// A specialised artifact's manifest: its round trip, the errors of a
// malformed one, and which program a run's input shapes pick (or the error
// naming the input dimension none takes).
#include "runtime/specialized_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/manifest.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace specialized_manifest_test {

SpecializedManifest two_dims() {
  SpecializedManifest m;
  m.format_version = kArtifactFormatVersion;
  m.switchyard_version = "0.1.0";
  m.dims = {"n", "s"};
  m.inputs = {{"x", DType::kFloat32, {{-1, "n"}, {-1, "s"}, {16, ""}}}};
  m.outputs = {{"y", DType::kFloat32, {{-1, "n"}, {-1, "s"}}}};
  m.specializations = {{{1, 16}, true}, {{1, 128}, true}, {{4, 16}, false}};
  m.chunking = {{"n", {0}, {0}, ""}, {"s", {}, {}, "nn.softmax(%x) at m.onnx:sm: normalises along axis 1, which holds s"}};
  return m;
}

std::string write_text(const std::string& name, const std::string& text) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("sy_specialized_" + name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

std::string read_error(const std::string& name, const std::string& text) {
  try {
    read_specialized_manifest_file(write_text(name, text));
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecializedManifest, RoundTripsAndNamesItsPrograms) {
  SpecializedManifest m = two_dims();
  std::optional<SpecializedManifest> read = read_specialized_manifest_file(write_text("ok", format_specialized_manifest(m)));
  ASSERT_TRUE(read);
  EXPECT_EQ(format_specialized_manifest(*read), format_specialized_manifest(m));
  EXPECT_EQ(specialization_name(*read, 1), "n=1,s=128");
  EXPECT_EQ(symbolic_shape_text(read->inputs[0].shape), "(n, s, 16)");
  EXPECT_FALSE(read->specializations[2].shared_weights);
}

TEST(SpecializedManifest, AnOrdinaryManifestIsLeftToTheOtherReader) {
  EXPECT_FALSE(read_specialized_manifest_file(write_text("plain", "{\"format_version\": 7, \"entry\": \"main\"}")));
}

TEST(SpecializedManifest, MalformedOnesAreNamedByPath) {
  std::string text = format_specialized_manifest(two_dims());
  std::string escaping = text;
  escaping.replace(escaping.find("\"n\",\n"), 3, "\"../n\"");
  EXPECT_NE(read_error("escaping", escaping).find("dims[0]: expected a dimension name (an identifier), got string"),
            std::string::npos);
  std::string old = text;
  old.replace(old.find("\"format_version\": 9"), 19, "\"format_version\": 6");
  EXPECT_NE(read_error("old", old).find("specializations: only format 7 and later have it"), std::string::npos);
  std::string newer = text;
  newer.replace(newer.find("\"format_version\": 9"), 19, "\"format_version\": 10");
  EXPECT_NE(read_error("newer", newer).find("artifact format version 10 is newer than this runtime supports (9)"),
            std::string::npos);
}

TEST(SpecializedManifest, InputShapesPickTheirProgramOrNameTheDimension) {
  SpecializedManifest m = two_dims();
  std::vector<std::vector<std::vector<int64_t>>> programs = {{{1, 16, 16}}, {{1, 128, 16}}, {{4, 16, 16}}};
  EXPECT_EQ(choose_specialization(m, programs, {{1, 128, 16}}), 1u);
  EXPECT_EQ(choose_specialization(m, programs, {{4, 16, 16}}), 2u);
  auto error = [&](std::vector<int64_t> shape) {
    try {
      choose_specialization(m, programs, {shape});
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error({2, 16, 16}),
            "input 'x' dimension 0 (n) is 2, but this artifact was compiled only for n=1,s=16; n=1,s=128; n=4,s=16 "
            "(switchyard compile --specialize)");
  EXPECT_EQ(error({1, 16, 8}), "input 'x': expected float32 (n, s, 16), got shape (1, 16, 8)");
  EXPECT_EQ(error({4, 128, 16}),
            "no specialisation of this artifact takes the inputs' shapes together (x (4, 128, 16)); it was compiled "
            "for n=1,s=16; n=1,s=128; n=4,s=16 (switchyard compile --specialize)");
}

}  // namespace specialized_manifest_test
}  // namespace switchyard
