// Compilation takes static shapes only (yet): a symbolic dimension reaching
// build_artifact, the default pipeline or lowering is refused by name,
// before any work, and nothing is written.
#include <gtest/gtest.h>

#include <filesystem>

#include "lower/lower_check.h"
#include "pipeline/build.h"
#include "pipeline/pass_table.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace symbolic_compile_test {

constexpr const char* kModel = R"(def @main(%x: Tensor[(n<=64, 8), float32], %w: Tensor[(4, 8), float32]) {
  nn.dense(%x, %w)
}
)";

std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    return e.span().to_string() + ": " + e.message();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(SymbolicCompile, BuildArtifactRefusesBeforeAnyWork) {
  IRModule mod = parse_module(kModel, "model.sy");
  std::string dir = ::testing::TempDir() + "/symbolic_compile_never_written";
  std::filesystem::remove_all(dir);
  BuildOptions options{.config = CompilationConfig::parse("cpu:0")};
  EXPECT_EQ(error_of([&] { build_artifact(mod, options, dir); }, ErrorKind::kBackend),
            "model.sy:1:11: cannot compile: dimension n<=64 of %x is symbolic (Tensor[(n<=64, 8), float32]): compile "
            "needs a static shape (--input-shape) or a specialisation of the symbolic dimension (--specialize); for example "
            "--input-shape x=1x8");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(SymbolicCompile, TheDefaultPipelineStopsAfterInferType) {
  IRModule mod = parse_module(kModel, "model.sy");
  Pass pipeline = default_pipeline({CompilationConfig::parse("cpu:0"), {}});
  EXPECT_EQ(error_of([&] { pipeline(mod); }, ErrorKind::kPass),
            "model.sy:1:11: pass 'PlanDevices' does not take symbolic dimensions yet: dimension n<=64 of %x is "
            "symbolic (Tensor[(n<=64, 8), float32])");
}

TEST(SymbolicCompile, LoweringRefusesToo) {
  IRModule typed = infer_type(parse_module(kModel, "model.sy"));
  EXPECT_EQ(error_of([&] { check_lowerable(typed, "main", nullptr); }, ErrorKind::kBackend),
            "model.sy:1:11: cannot lower: dimension n<=64 of %x is symbolic (Tensor[(n<=64, 8), float32]): compile "
            "needs a static shape (--input-shape) or a specialisation of the symbolic dimension (--specialize)");
}

}  // namespace symbolic_compile_test
}  // namespace switchyard
