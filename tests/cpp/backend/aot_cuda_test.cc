// Artifacts for cuda:0 and the host: the split of tests/data/mlp_cuda_split.sy
// builds its element-wise groups and reductions on cuda:0 as cubins beside
// model.so, recorded in the manifest with the compute capability they need.
// Built here with a toolkit (the no-toolkit error without one); run on a GPU
// (scripts/gpu-check.sh) once the runtime has a cuda device.
#include <gtest/gtest.h>

#include <filesystem>

#include "aot_test_util.h"
#include "backend/build.h"
#include "backend/cuda_compile.h"
#include "runtime/manifest.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "text/parser.h"

namespace switchyard {
namespace {

using testing::aot_options;
using testing::aot_scratch_dir;
using testing::example_models_dir;
namespace fs = std::filesystem;

IRModule split_model() {
  return parse_module(testing::read_file(example_models_dir() + "/mlp_cuda_split.sy"), "mlp_cuda_split.sy");
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

// The artifact of `mod` for `devices`, or nothing (and a skip) without a toolkit.
std::string build_for_cuda(const IRModule& mod, const std::string& devices, const std::string& name) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options(devices), dir);
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
  // The 256-byte sum to the host, the 512-byte dense result back.
  ASSERT_EQ(m.copies.size(), 2u);
  EXPECT_EQ(m.copies[0].src_device, 0);
  EXPECT_EQ(m.copies[0].bytes, 256u);
  EXPECT_EQ(m.copies[1].dst_device, 0);
  EXPECT_EQ(m.copies[1].bytes, 512u);
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

TEST(CudaArtifact, WithoutAToolkitACudaBuildIsAClearError) {
  if (cuda_toolkit_available())
    GTEST_SKIP() << "this build has a CUDA toolkit; the no-toolkit error is checked in a SY_CUDA=OFF build";
  std::string dir = aot_scratch_dir("cuda_no_toolkit") + "/artifact";
  try {
    build_artifact(split_model(), aot_options("cuda:0,cpu:0"), dir);
    FAIL() << "built CUDA kernels without a toolkit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBackend);
    EXPECT_NE(e.message().find("for sm_90: this Switchyard was built without a CUDA toolkit"), std::string::npos)
        << e.message();
  }
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace switchyard
