// The CPU target's -libs option: "cpu -libs=none" runs every anchor as
// generated loops (the fallback benchmark compares them with oneDNN this
// way), planned in plain layouts; any other value than onednn or none is
// refused with the target named.
#include <gtest/gtest.h>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "support/error.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace target_libraries_test {

// The whole build on a CPU target without oneDNN: every window a loop,
// planned in plain layouts, the answer the interpreter's.
TEST(TargetLibraries, WithoutLibrariesEveryWindowRunsAsLoops) {
  IRModule mod = parse_module(R"(
def @main(%x: Tensor[(1, 6, 15, 13), float32], %w1: Tensor[(12, 6, 3, 3), float32],
          %w2: Tensor[(12, 4, 3, 3), float32], %w3: Tensor[(12, 1, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.max_pool2d(%1, pool_size=[3, 3], strides=[2, 2], ceil_mode=True);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1], groups=3);
  %4 = nn.conv2d(%3, %w3, strides=[2, 2], padding=[1, 1], groups=12);
  %5 = nn.avg_pool2d(%4, pool_size=[3, 3], padding=[1, 1]);
  nn.global_avg_pool2d(%5)
})",
                              "loops.sy");
  std::string dir = aot_scratch_dir("window_loops_no_libraries");
  build_artifact(mod, aot_options("cpu:0=cpu -libs=none"), dir);
  std::shared_ptr<Artifact> artifact = Artifact::load(dir);
  EXPECT_TRUE(artifact->manifest().primitives.empty());
  for (const ManifestKernel& kernel : artifact->manifest().kernels) EXPECT_EQ(kernel.primitive, -1) << kernel.name;
  std::map<std::string, NDArray> inputs = random_inputs(mod, 3);
  EXPECT_EQ(compare_arrays(run_artifact(dir, inputs)[0], interpret(mod, inputs)[0], 1e-4, 1e-4), "");
}

// On the default target, float16 windows (generated loops) between float32
// ones (oneDNN primitives): PlanLayouts keeps the values the loops read and
// write plain NCHW, the layout they take, and the answer is the
// interpreter's.
TEST(TargetLibraries, LoopWindowsBetweenLibraryWindowsComputeWhatTheInterpreterDoes) {
  IRModule mod = parse_module(R"(
def @main(%x: Tensor[(1, 6, 15, 13), float32], %w1: Tensor[(9, 6, 3, 3), float32],
          %w2: Tensor[(9, 3, 3, 3), float16], %w3: Tensor[(16, 9, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = cast(%1, dtype="float16");
  %3 = nn.conv2d(%2, %w2, padding=[1, 1], groups=3);
  %4 = nn.max_pool2d(%3, pool_size=[3, 3], strides=[2, 2], ceil_mode=True);
  %5 = cast(%4, dtype="float32");
  %6 = nn.conv2d(%5, %w3);
  nn.relu(%6)
})",
                              "mixed.sy");
  std::string dir = aot_scratch_dir("window_loops_between_primitives");
  build_artifact(mod, aot_options("cpu:0"), dir);
  std::shared_ptr<Artifact> artifact = Artifact::load(dir);
  int primitives = 0, loops = 0;
  for (const ManifestKernel& kernel : artifact->manifest().kernels) (kernel.primitive >= 0 ? primitives : loops) += 1;
  EXPECT_GE(primitives, 2);
  EXPECT_GE(loops, 2);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 5);
  EXPECT_EQ(compare_arrays(run_artifact(dir, inputs)[0], interpret(mod, inputs)[0], 1e-2, 1e-2), "");
}

TEST(TargetLibraries, AnUnknownLibraryIsAUsageError) {
  IRModule mod = parse_module("def @main(%x: Tensor[(1, 2, 5, 5), float32]) {\n  nn.max_pool2d(%x, pool_size=[2, 2])\n}\n",
                              "pool.sy");
  try {
    build_artifact(mod, aot_options("cpu:0=cpu -libs=mkl"), aot_scratch_dir("window_loops_bad_libs"));
    FAIL() << "built with -libs=mkl";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.message().find("-libs takes 'onednn' or 'none', got 'mkl'"), std::string::npos) << e.message();
  }
}

}  // namespace target_libraries_test
}  // namespace switchyard::testing
