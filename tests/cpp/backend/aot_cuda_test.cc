// Artifacts for cuda:0 and the host: an MLP-like split builds its
// element-wise groups and reductions on cuda:0 as cubins beside model.so,
// recorded in the manifest with the compute capability they need.
// Built here with a toolkit (the no-toolkit error without one); run on a GPU
// (scripts/gpu-check.sh) against the interpreter, skipping here with why.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "aot_test_util.h"
#include "targets/cuda/compiler/cuda_compile.h"
#include "pipeline/build.h"
#include "runtime/artifact.h"
#include "targets/cuda/runtime/cuda_driver.h"
#include "targets/cuda/runtime/cuda_library_primitive.h"
#include "runtime/manifest.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"

namespace switchyard {
namespace aot_cuda_test {

using testing::aot_options;
using testing::aot_scratch_dir;
using testing::compare_arrays;
using testing::interpret;
using testing::random_inputs;
using testing::run_artifact;
namespace fs = std::filesystem;

// An MLP-like model split across cuda:0 and the host: the exp and its sum
// run on cuda:0 (copying the 256-byte sum beats copying %x), the dense runs
// on the host, where its weights are (copying their 2 KiB would cost more
// than the two activations), and the relu-multiply tail returns to cuda:0,
// where %z and the output live. Inline, not a file: the
// GPU machine runs these programs away from the source tree.
IRModule split_model() {
  return parse_module(
      "def @main(%x: Tensor[(4, 16, 8), float32] @cuda:0, %w: Tensor[(32, 16), float32] @cpu:0,\n"
      "          %z: Tensor[(2, 4, 32), float32] @cuda:0) -> Tensor[(2, 4, 32), float32] @cuda:0 {\n"
      "  %0 = sum(exp(%x), axis=[2]);\n"
      "  %1 = nn.dense(%0, %w);\n"
      "  multiply(nn.relu(%1), %z)\n"
      "}\n",
      "mlp_cuda_split.sy");
}

// Every operator runs on cuda:0 but the I/O, which the host stages.
IRModule all_gpu_model() {
  return parse_module(
      "def @main(%x: Tensor[(3, 50, 7), float32] @cuda:0, %y: Tensor[(7), float32] @cuda:0) -> "
      "Tensor[(3, 50), float32] @cuda:0 {\n"
      "  %0 = tanh(add(%x, %y));\n"
      "  max(multiply(%0, %0), axis=[2])\n"
      "}\n",
      "all_gpu.sy");
}

// A residual CNN on cuda:0: convolutions with bias, ReLU and the residual
// sum, and pools, as cuDNN calls; the dense with its bias through cuBLASLt,
// then its tanh as loops; a dilated pool, which cuDNN refuses, as loops.
IRModule cnn_model() {
  return parse_module(
      "def @main(%x: Tensor[(1, 3, 17, 15), float32] @cuda:0, %w0: Tensor[(12, 3, 3, 3), float32] @cuda:0,\n"
      "          %b0: Tensor[(12), float32] @cuda:0, %w1: Tensor[(12, 12, 3, 3), float32] @cuda:0,\n"
      "          %w2: Tensor[(12, 12, 1, 1), float32] @cuda:0, %wd: Tensor[(10, 12), float32] @cuda:0,\n"
      "          %bd: Tensor[(10), float32] @cuda:0) -> Tensor[(1, 10), float32] @cuda:0 {\n"
      "  %0 = nn.relu(nn.bias_add(nn.conv2d(%x, %w0, padding=[1, 1]), %b0));\n"
      "  %1 = nn.max_pool2d(%0, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]);\n"
      "  %2 = nn.relu(nn.conv2d(%1, %w1, padding=[1, 1]));\n"
      "  %3 = nn.relu(add(nn.conv2d(%2, %w2), %1));\n"
      "  %4 = nn.max_pool2d(%3, pool_size=[2, 2], dilation=[2, 2]);\n"
      "  %5 = reshape(nn.global_avg_pool2d(%4), newshape=[1, 12]);\n"
      "  tanh(nn.bias_add(nn.dense(%5, %wd), %bd))\n"
      "}\n",
      "cnn_cuda.sy");
}

// An output that is also an input: a move within cuda:0's memory.
IRModule moving_model() {
  return parse_module(
      "def @main(%x: Tensor[(3, 5), float32] @cuda:0) -> (Tensor[(3, 5), float32], Tensor[(3, 5), float32]) @cuda:0 {\n"
      "  (exp(%x), %x)\n"
      "}\n",
      "move.sy");
}

// The artifact of `mod` for `devices` (with its generated sources).
std::string build_for_cuda(const IRModule& mod, const std::string& devices, const std::string& name) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  BuildOptions options = aot_options(devices);
  options.emit_source = true;
  build_artifact(mod, options, dir);
  return dir;
}

TEST(CudaArtifact, TheSplitMlpKeepsItsElementwiseTailAndReductionOnCuda0AsCubins) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: CudaArtifact.WithoutAToolkit* checks the error";
  std::string dir = build_for_cuda(split_model(), "cuda:0,cpu:0", "cuda_split");
  Manifest m = read_manifest_file(dir + "/manifest.json");
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[0].kind, "cuda");
  EXPECT_EQ(m.devices[0].compute_capability, 90);  // sm_90, the default -arch
  EXPECT_TRUE(m.devices[0].cpu_features.empty());
  EXPECT_EQ(m.devices[1].kind, "cpu");
  EXPECT_EQ(m.devices[1].compute_capability, 0);
  ASSERT_EQ(m.kernels.size(), 3u);
  // The exp-sum and the relu-multiply on cuda:0; the dense on the host.
  std::vector<int> devices;
  for (const ManifestKernel& k : m.kernels) {
    devices.push_back(k.device);
    if (k.device != 0) {
      EXPECT_TRUE(k.image.empty()) << k.name;
      continue;
    }
    EXPECT_EQ(k.image, "cuda/" + k.name + ".cubin");
    ASSERT_TRUE(fs::is_regular_file(dir + "/" + k.image)) << k.image;
    EXPECT_EQ(sha256_file_hex(dir + "/" + k.image), k.image_sha256);
    ASSERT_EQ(k.functions.size(), 1u);
    EXPECT_EQ(k.functions[0].rfind(k.name + "_", 0), 0u) << k.functions[0];
    EXPECT_FALSE(k.may_fault);
  }
  EXPECT_EQ(devices, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(m.kernels[1].kind, "dnnl");
  // The host's ends of both copies are page-locked: its only arena is pinned.
  ASSERT_EQ(m.arenas.size(), 2u);
  EXPECT_EQ(m.arenas[0].device, 0);
  EXPECT_EQ(m.arenas[0].scope, "global");
  EXPECT_EQ(m.arenas[1].device, 1);
  EXPECT_EQ(m.arenas[1].scope, "pinned");
  // The 256-byte sum to the host, the 512-byte dense result back.
  ASSERT_EQ(m.copies.size(), 2u);
  EXPECT_EQ(m.copies[0].src_device, 0);
  EXPECT_EQ(m.copies[0].bytes, 256u);
  EXPECT_EQ(m.copies[1].dst_device, 0);
  EXPECT_EQ(m.copies[1].bytes, 512u);
}

TEST(CudaArtifact, AnchorsOnCuda0AreLibraryPrimitivesInPlainLayoutsWithTheirEpilogueAsCubins) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: nothing to compile";
  std::string dir = build_for_cuda(cnn_model(), "cuda:0,cpu:0", "cuda_cnn");
  Manifest m = read_manifest_file(dir + "/manifest.json");
  EXPECT_TRUE(m.copies.empty());
  std::map<std::string, int> kinds;
  int dense_kernel = -1;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const ManifestKernel& kernel = m.kernels[k];
    EXPECT_EQ(kernel.device, 0) << kernel.name;
    ++kinds[kernel.kind];
    if (kernel.kind != "cuda_library") continue;
    ASSERT_GE(kernel.primitive, 0) << kernel.name;
    const PrimitiveSpec& spec = m.primitives[size_t(kernel.primitive)];
    EXPECT_TRUE(cuda_library_makes(spec)) << kernel.name << ": " << cuda_library_refusal(spec);
    // Neither the CPU's blocked layouts nor its own algorithms reach a GPU.
    EXPECT_TRUE(spec.src.format.empty() && spec.dst.format.empty()) << kernel.name;
    EXPECT_TRUE(spec.algorithm.find("winograd") == std::string::npos && spec.algorithm != "matmul_packed")
        << spec.algorithm;
    if (spec.kind == PrimitiveKind::kMatmul) dense_kernel = int(k);
    // A primitive alone has no image; the dense's tanh is loops in one.
    EXPECT_EQ(kernel.image.empty(), spec.kind != PrimitiveKind::kMatmul) << kernel.name;
  }
  // Three convolutions, the two pools cuDNN takes, and the dense; the
  // dilated pool (and, maybe, the reshape) as loops.
  EXPECT_EQ(kinds["cuda_library"], 6);
  EXPECT_GE(kinds["loops"], 1);
  EXPECT_EQ(kinds.count("dnnl"), 0u);
  ASSERT_GE(dense_kernel, 0);
  EXPECT_EQ(m.primitives[size_t(m.kernels[size_t(dense_kernel)].primitive)].bias_input, 2);
  std::string entry = testing::read_file(dir + "/src/sy_model_entry.cc");
  size_t begin = entry.find("services->kernel_begin(services->ctx, " + std::to_string(dense_kernel) + ")");
  ASSERT_NE(begin, std::string::npos) << entry;
  size_t primitive = entry.find("services->run_primitive(services->ctx, 0, ", begin);
  size_t launch = entry.find("services->launch_kernel(services->ctx, 0, 0, ", begin);
  EXPECT_TRUE(primitive != std::string::npos && launch != std::string::npos && primitive < launch) << entry;
}

TEST(CudaArtifact, AnArchitectureOptionSetsTheComputeCapabilityTheCubinsNeed) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: nothing to compile";
  std::string dir = build_for_cuda(all_gpu_model(), "cuda:0=cuda -arch=sm_80,cpu:0", "cuda_sm80");
  Manifest m = read_manifest_file(dir + "/manifest.json");
  EXPECT_EQ(m.devices[0].compute_capability, 80);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].device, 0);
  EXPECT_FALSE(m.kernels[0].image.empty());
  // Only the staging of the I/O crosses: no planned copy.
  EXPECT_TRUE(m.copies.empty());
}

// The host cannot address a GPU's memory: the entry moves there through the runtime, not memcpy.
TEST(CudaArtifact, AMoveWithinCuda0GoesThroughTheRuntime) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: nothing to compile";
  std::string dir = build_for_cuda(moving_model(), "cuda:0,cpu:0", "cuda_move");
  std::string entry = testing::read_file(dir + "/src/sy_model_entry.cc");
  EXPECT_NE(entry.find("services->device_move(services->ctx, 0, "), std::string::npos) << entry;
  EXPECT_EQ(entry.find("std::memcpy("), std::string::npos) << entry;
  EXPECT_NE(entry.find("services->launch_kernel(services->ctx, 0, 0, "), std::string::npos) << entry;
  Manifest m = read_manifest_file(dir + "/manifest.json");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_TRUE(fs::is_regular_file(dir + "/src/" + m.kernels[0].name + ".cu"));
}

// cuda:0 alone gets cpu:0 as its host (issue 39: the entry was compiled
// for cuda:0's target, through a null pointer): the same artifact as
// "cuda:0,cpu:0".
TEST(CudaArtifact, ABuildForCuda0AloneGetsCpu0AsItsHost) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: WithoutAToolkit* builds cuda:0 alone";
  Manifest alone = read_manifest_file(build_for_cuda(all_gpu_model(), "cuda:0", "cuda_alone") + "/manifest.json");
  Manifest with_host =
      read_manifest_file(build_for_cuda(all_gpu_model(), "cuda:0,cpu:0", "cuda_with_host") + "/manifest.json");
  ASSERT_EQ(alone.devices.size(), 2u);
  EXPECT_EQ(alone.devices[0].kind, "cuda");
  EXPECT_EQ(alone.devices[1].kind, "cpu");
  EXPECT_EQ(alone.devices[1].id, 0);
  EXPECT_EQ(alone.kernels.size(), with_host.kernels.size());
  EXPECT_EQ(alone.hashes.model_so, with_host.hashes.model_so);
}

TEST(CudaArtifact, WithoutAToolkitACudaBuildIsAClearError) {
  if (cuda_toolkit_available())
    GTEST_SKIP() << "this build has a CUDA toolkit; the no-toolkit error is checked in a SY_CUDA=OFF build";
  std::string dir = aot_scratch_dir("cuda_no_toolkit") + "/artifact";
  try {
    build_artifact(split_model(), aot_options("cuda:0,cpu:0"), dir);
    FAIL() << "built CUDA kernels without a toolkit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBackend);
    EXPECT_EQ(e.message().rfind("cuda:0: cannot compile fused_exp_sum_", 0), 0u) << e.message();
    EXPECT_NE(e.message().find("for sm_90: this Switchyard was built without a CUDA toolkit"), std::string::npos)
        << e.message();
    EXPECT_EQ(e.span().line(), 3u);  // the exp-sum group's line
  }
  EXPECT_FALSE(fs::exists(dir));
  // cuda:0 alone, with its implicit host, fails the same way.
  EXPECT_THROW(build_artifact(all_gpu_model(), aot_options("cuda:0"), dir), Error);
  EXPECT_FALSE(fs::exists(dir));
}

// Why cuda:0 cannot run artifacts here ("" when it can).
std::string gpu_missing() {
  if (!cuda_toolkit_available()) return "this build has no CUDA toolkit (SY_CUDA=OFF): nothing to build or run";
  try {
    CudaGpu::open(0);
    return "";
  } catch (const RuntimeError& e) {
    return e.what();
  }
}

TEST(CudaArtifact, LoadingWhereCuda0IsMissingNamesTheDeviceAndWhatIsMissing) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit: no artifact to load";
  if (gpu_missing().empty()) GTEST_SKIP() << "cuda:0 is here: the artifact loads (CudaArtifact.*Interpreter* run it)";
  std::string dir = build_for_cuda(split_model(), "cuda:0,cpu:0", "cuda_load");
  try {
    Artifact::load(dir);
    FAIL() << "loaded without a GPU";
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind(dir + "/manifest.json: devices[0] (cuda:0): cuda:0: no GPU can be used: ", 0), 0u)
        << message;
  }
}

// The artifact's outputs are the interpreter's on the same random inputs.
void expect_matches_interpreter(const IRModule& mod, const std::string& devices, const std::string& name) {
  std::string dir = build_for_cuda(mod, devices, name);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 11);
  std::vector<NDArray> expected = interpret(mod, inputs);
  std::vector<NDArray> actual = run_artifact(dir, inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(compare_arrays(actual[i], expected[i], 1e-5, 1e-5), "") << name << " output " << i;
}

// On a GPU (scripts/gpu-check.sh); here each skips, saying why, and
// SY_REQUIRE_GPU=1 makes a missing GPU a failure.
TEST(CudaArtifact, TheSplitMlpMatchesTheInterpreterOnCuda0AndTheHost) {
  if (std::string why = gpu_missing(); !why.empty()) {
    if (std::getenv("SY_REQUIRE_GPU")) FAIL() << why;
    GTEST_SKIP() << "no GPU: " << why;
  }
  expect_matches_interpreter(split_model(), "cuda:0,cpu:0", "cuda_split_run");
}

TEST(CudaArtifact, AnAllGpuModelMatchesTheInterpreterOnCuda0) {
  if (std::string why = gpu_missing(); !why.empty()) {
    if (std::getenv("SY_REQUIRE_GPU")) FAIL() << why;
    GTEST_SKIP() << "no GPU: " << why;
  }
  expect_matches_interpreter(all_gpu_model(), "cuda:0,cpu:0", "cuda_all_gpu_run");
  expect_matches_interpreter(all_gpu_model(), "cuda:0", "cuda_alone_run");
  expect_matches_interpreter(moving_model(), "cuda:0,cpu:0", "cuda_move_run");
  expect_matches_interpreter(cnn_model(), "cuda:0,cpu:0", "cuda_cnn_run");
}

// A kernel whose integer division faults reports it, naming the kernel, once its work is done.
TEST(CudaArtifact, AFaultOnCuda0FailsTheRunNamingTheKernel) {
  if (std::string why = gpu_missing(); !why.empty()) {
    if (std::getenv("SY_REQUIRE_GPU")) FAIL() << why;
    GTEST_SKIP() << "no GPU: " << why;
  }
  IRModule mod = parse_module(
      "def @main(%x: Tensor[(64), int32] @cuda:0, %y: Tensor[(64), int32] @cuda:0) -> Tensor[(64), int32] @cuda:0 {\n"
      "  divide(%x, %y)\n"
      "}\n",
      "divide.sy");
  std::string dir = build_for_cuda(mod, "cuda:0,cpu:0", "cuda_fault");
  ASSERT_TRUE(read_manifest_file(dir + "/manifest.json").kernels.at(0).may_fault);
  NDArray x(DType::kInt32, {64}), y(DType::kInt32, {64});
  for (int64_t i = 0; i < 64; ++i) {
    x.set_from_double(i, double(i));
    y.set_from_double(i, i == 40 ? 0.0 : 3.0);
  }
  std::shared_ptr<Artifact> artifact = Artifact::load(dir);
  try {
    artifact->run({{"x", x}, {"y", y}});
    FAIL() << "a division by zero ran without a fault";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
  // The word is cleared: a run without zeros succeeds.
  y.set_from_double(40, 1.0);
  EXPECT_NO_THROW(artifact->run({{"x", x}, {"y", y}}));
}

}  // namespace aot_cuda_test
}  // namespace switchyard
