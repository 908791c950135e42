// End to end on tests/data/mlp_two_devices.sy for cpu:0,cpu:1:
// compile, run through the runtime, compare with the interpreter, check where
// kernels and copies ran, the object cache, and the artifact's defences.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "aot_test_util.h"
#include "ir/functor.h"
#include "pipeline/pass_table.h"
#include "runtime/artifact.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_mlp_test {

namespace fs = std::filesystem;

class AotMlp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new IRModule(parse_file(example_models_dir() + "/mlp_two_devices.sy"));
    dir_ = new std::string(aot_scratch_dir("mlp") + "/artifact");
    BuildOptions options = aot_options("cpu:0,cpu:1");
    options.emit_source = true;
    report_ = new BuildReport(build_artifact(*model_, options, *dir_));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
    delete report_;
  }
  static const IRModule& model() { return *model_; }
  static const std::string& dir() { return *dir_; }
  static const BuildReport& report() { return *report_; }

 private:
  static IRModule* model_;
  static std::string* dir_;
  static BuildReport* report_;
};
IRModule* AotMlp::model_ = nullptr;
std::string* AotMlp::dir_ = nullptr;
BuildReport* AotMlp::report_ = nullptr;

TEST_F(AotMlp, MatchesTheInterpreter) {
  for (uint64_t seed : {1, 2}) {
    std::map<std::string, NDArray> inputs = random_inputs(model(), seed);
    std::vector<NDArray> expected = interpret(model(), inputs);
    std::vector<NDArray> actual = run_artifact(dir(), inputs);
    ASSERT_EQ(actual.size(), 1u);
    ASSERT_EQ(expected.size(), 1u);
    EXPECT_EQ(compare_arrays(actual[0], expected[0], 1e-4, 1e-4), "");
  }
}

TEST_F(AotMlp, KernelsRunWhereThePlannedProgramPutsThem) {
  // The planned, fused program's kernel calls in evaluation order.
  PipelineOptions pipeline;
  pipeline.config = CompilationConfig::parse("cpu:0,cpu:1");
  IRModule planned = default_pipeline(pipeline)(model());
  std::vector<std::string> planned_devices;
  post_order_visit(planned.lookup("main")->body, [&](const Expr& e) {
    const CallNode* call = as<CallNode>(e);
    const FunctionNode* callee = call ? as<FunctionNode>(call->op) : nullptr;
    if (callee && callee->is_primitive()) planned_devices.push_back(e->virtual_device()->device_name());
  });
  ASSERT_GE(planned_devices.size(), 2u);
  EXPECT_EQ(planned_devices.front(), "cpu:0");
  EXPECT_EQ(planned_devices.back(), "cpu:1");

  auto artifact = Artifact::load(dir());
  RunResult result = artifact->run(random_inputs(model(), 3));
  std::vector<std::string> ran_on;
  for (const KernelRecord& k : result.stats.kernels) ran_on.push_back(artifact->manifest().devices[size_t(k.device)].name);
  EXPECT_EQ(ran_on, planned_devices);
  EXPECT_EQ(result.stats.kernels.size(), artifact->manifest().kernels.size());
}

TEST_F(AotMlp, ExactlyOneCopyFromCpu0ToCpu1) {
  auto artifact = Artifact::load(dir());
  const Manifest& manifest = artifact->manifest();
  RunResult result = artifact->run(random_inputs(model(), 4));
  ASSERT_EQ(result.stats.copies.size(), 1u);
  const CopyRecord& copy = result.stats.copies[0];
  EXPECT_EQ(manifest.devices[size_t(copy.src_device)].name, "cpu:0");
  EXPECT_EQ(manifest.devices[size_t(copy.dst_device)].name, "cpu:1");
  EXPECT_EQ(copy.bytes, 512u * sizeof(float));  // relu's (1, 512) result
  EXPECT_EQ(report().copies, 1);
}

TEST_F(AotMlp, ManifestAndReportDescribeThePlan) {
  Manifest manifest = read_manifest_file(dir() + "/manifest.json");
  ASSERT_EQ(manifest.devices.size(), 2u);
  ASSERT_EQ(manifest.inputs.size(), 5u);
  EXPECT_EQ(manifest.inputs[0].name, "x");
  EXPECT_EQ(manifest.devices[size_t(manifest.inputs[0].device)].name, "cpu:0");
  ASSERT_EQ(manifest.outputs.size(), 1u);
  EXPECT_EQ(manifest.devices[size_t(manifest.outputs[0].device)].name, "cpu:1");
  EXPECT_EQ(manifest.outputs[0].shape, (std::vector<int64_t>{1, 10}));
  for (const ManifestKernel& k : manifest.kernels) EXPECT_NE(k.span.find("mlp_two_devices.sy:"), std::string::npos);
  for (const ManifestArena& a : manifest.arenas) EXPECT_LE(a.lower_bound_bytes, a.bytes);
  ASSERT_EQ(report().memory.size(), 2u);
  EXPECT_EQ(report().memory[0].device, "cpu:0");
  EXPECT_GT(report().memory[0].lower_bound_bytes, 0u);
  EXPECT_GE(report().memory[0].planned_bytes, report().memory[0].lower_bound_bytes);
  EXPECT_FALSE(report().stages.empty());
  EXPECT_GT(report().total_milliseconds(), 0.0);
}

TEST_F(AotMlp, EmitSourceKeepsReadableGeneratedCode) {
  std::string entry = read_file(dir() + "/src/sy_model_entry.cc");
  EXPECT_NE(entry.find("extern \"C\" int sy_model_run(const SyRunArgs* args)"), std::string::npos);
  EXPECT_NE(entry.find("services->kernel_begin(services->ctx, 0);"), std::string::npos);
  EXPECT_NE(entry.find("services->device_copy(services->ctx, 0, 1, "), std::string::npos);
  EXPECT_NE(entry.find("// copy 0: cpu:0 -> cpu:1"), std::string::npos);
  EXPECT_NE(entry.find("mlp_two_devices.sy:"), std::string::npos);  // steps commented with spans
  size_t sources = 0;
  for (const auto& file : fs::directory_iterator(dir() + "/src")) sources += file.path().extension() == ".cc";
  // Beside the kernels: the entry, and model.so's description (compiled once weights.bin is summed).
  EXPECT_EQ(sources, size_t(report().distinct_kernels - report().primitive_only_kernels) + 2);
  EXPECT_TRUE(fs::exists(dir() + "/src/sy_model_description.cc"));
}

TEST_F(AotMlp, RebuildingTheSameModelCompilesNothing) {
  std::string again = aot_scratch_dir("mlp_again") + "/artifact";
  BuildReport second = build_artifact(model(), aot_options("cpu:0,cpu:1"), again);
  EXPECT_EQ(second.compiler_invocations, 0);
  EXPECT_EQ(second.objects_compiled, 0);
  EXPECT_EQ(second.objects_cached, second.distinct_kernels - second.primitive_only_kernels + 2);
  EXPECT_TRUE(second.link_cached);
  EXPECT_FALSE(fs::exists(again + "/src"));  // no --emit-source
  std::map<std::string, NDArray> inputs = random_inputs(model(), 5);
  EXPECT_EQ(compare_arrays(run_artifact(again, inputs)[0], run_artifact(dir(), inputs)[0], 0, 0), "");
}

TEST_F(AotMlp, PrintAfterShowsTheIrAfterAPassAndTheLoweredProgramAfterAStage) {
  std::ostringstream printed;
  BuildOptions options = aot_options("cpu:0,cpu:1");
  options.print_after = {"FuseOps", "memory-plan"};
  options.print_to = &printed;
  build_artifact(model(), options, aot_scratch_dir("mlp_printed") + "/artifact");
  std::string text = printed.str();
  EXPECT_NE(text.find("# IR after FuseOps"), std::string::npos) << text;
  EXPECT_NE(text.find("Primitive=1"), std::string::npos) << text;  // fused
  EXPECT_EQ(text.find("# IR after InferType"), std::string::npos) << text;
  EXPECT_NE(text.find("// after memory-plan\nlowered @main: 8 buffers, 3 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("at offset 0"), std::string::npos) << text;  // the plan's offsets
  EXPECT_EQ(text.find("// after lower\n"), std::string::npos) << text;
}

TEST_F(AotMlp, PrintAfterAnUnknownStageFailsBeforeAnyWorkListingTheStages) {
  BuildOptions options = aot_options("cpu:0,cpu:1");
  options.print_after = {"FuseOp"};
  std::string out = aot_scratch_dir("mlp_print_unknown") + "/artifact";
  try {
    build_artifact(model(), options, out);
    FAIL() << "an unknown stage was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("--print-after: unknown stage 'FuseOp' (known: all, InferType, PlanDevices"),
              std::string::npos) << e.message();
    EXPECT_NE(e.message().find("PlanLayouts, lower, generate-kernels, layouts, pinned-buffers, memory-plan)"),
              std::string::npos) << e.message();
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(AotMlp, CorruptArtifactsAreRejected) {
  std::string copy = aot_scratch_dir("mlp_corrupt") + "/artifact";
  fs::copy(dir(), copy, fs::copy_options::recursive);
  {
    std::fstream weights(copy + "/weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    weights.seekp(100);
    weights.put('\x7f');
  }
  try {
    Artifact::load(copy);
    FAIL() << "a changed weights.bin loaded";
  } catch (const RuntimeError& e) {
    // The MLP's weights are inputs, so its weights.bin is empty: the byte
    // written at 100 makes it longer than the manifest says, refused before hashing.
    EXPECT_NE(std::string(e.what()).find("weights.bin has 101 bytes, but the manifest's weights end at byte 0"),
              std::string::npos)
        << e.what();
  }
  fs::resize_file(copy + "/model.so", 100);
  EXPECT_THROW(Artifact::load(copy), RuntimeError);
}

TEST_F(AotMlp, WrongInputsAreRejectedByName) {
  auto artifact = Artifact::load(dir());
  std::map<std::string, NDArray> inputs = random_inputs(model(), 6);
  inputs["w1"] = NDArray(DType::kFloat32, {784, 512});
  try {
    artifact->run(inputs);
    FAIL() << "a transposed weight was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("'w1'"), std::string::npos) << e.what();
  }
  inputs.erase("w1");
  EXPECT_THROW(artifact->run(inputs), RuntimeError);
}

TEST(AotBuild, AFailedCompileLeavesNoArtifactAndShowsTheCompilersMessage) {
  std::string scratch = aot_scratch_dir("failing_compiler");
  std::string compiler = scratch + "/fake-c++";
  {
    std::ofstream script(compiler);
    script << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fake c++ 1.0'; exit 0; fi\n"
              "echo 'generated.cc:1:1: error: the fake compiler refuses' >&2\nexit 1\n";
  }
  fs::permissions(compiler, fs::perms::owner_all);
  BuildOptions options = aot_options("cpu:0,cpu:1");
  options.cxx = compiler;
  options.cache_dir = scratch + "/cache";
  std::string output = scratch + "/artifact";
  try {
    build_artifact(parse_file(example_models_dir() + "/mlp_two_devices.sy"), options, output);
    FAIL() << "the build succeeded with a compiler that always fails";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBackend);
    EXPECT_NE(e.message().find("the fake compiler refuses"), std::string::npos) << e.message();
    size_t kept = e.message().find("the source is kept at ");
    ASSERT_NE(kept, std::string::npos) << e.message();
    EXPECT_TRUE(fs::exists(e.message().substr(kept + 22))) << e.message();
  }
  EXPECT_FALSE(fs::exists(output));
  for (const auto& entry : fs::directory_iterator(scratch))
    EXPECT_EQ(entry.path().filename().string().find(".artifact"), std::string::npos) << entry.path();
}

TEST(AotBuild, AMissingCompilerIsAClearError) {
  BuildOptions options = aot_options("cpu:0");
  options.cxx = "/nonexistent/switchyard-test-c++";
  std::string output = aot_scratch_dir("missing_compiler") + "/artifact";
  try {
    build_artifact(parse_file(example_models_dir() + "/mlp_two_devices.sy"), options, output);
    FAIL() << "the build succeeded without a compiler";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBackend);
    EXPECT_NE(e.message().find("cannot run the C++ compiler '/nonexistent/switchyard-test-c++'"), std::string::npos)
        << e.message();
  }
  EXPECT_FALSE(fs::exists(output));
}

TEST(AotBuild, RefusesToReplaceADirectoryThatIsNotAnArtifact) {
  std::string output = aot_scratch_dir("not_an_artifact");
  { std::ofstream(output + "/notes.txt") << "keep me\n"; }
  EXPECT_THROW(build_artifact(parse_file(example_models_dir() + "/mlp_two_devices.sy"), aot_options("cpu:0,cpu:1"),
                              output),
               Error);
  EXPECT_TRUE(fs::exists(output + "/notes.txt"));
}

}  // namespace aot_mlp_test
}  // namespace switchyard::testing
