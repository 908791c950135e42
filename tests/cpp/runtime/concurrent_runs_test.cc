// One loaded artifact run from many threads at once (issue 41): a ResNet
// basic block written by hand against model_abi.h, so no compiler is
// needed (and CI's ThreadSanitizer stage runs it), made of the kernels the
// compiler gives ResNet's 3x3 layers: a Winograd convolution with a ReLU,
// then one adding the block's input (a sum post-op) before its ReLU. Each
// thread runs its own input; every output must equal, bit for bit, the
// sequential run of that input.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "hand_model.h"
#include "primitive_buffers.h"
#include "runtime/artifact.h"
#include "runtime/model_description.h"
#include "switchyard/model_abi.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard {
namespace concurrent_runs_test {

// ResNet-18's first stage at a quarter of its area: 49 tiles of 4x4, so the
// 36 products take most of a call and concurrent runs overlap there (with
// 32 channels at 16x16, half of this test's runs before the fix passed on
// a loaded two-core machine).
constexpr int64_t kChannels = 64, kSide = 28;
constexpr int kThreads = 8, kRunsPerThread = 12;

const std::vector<int64_t> kActivation = {1, kChannels, kSide, kSide};
const std::vector<int64_t> kWeights = {kChannels, kChannels, 3, 3};

// A 3x3 Winograd convolution of channels-last activations reading kernel
// inputs src (0), weights (1), bias (2), with `post_ops`.
PrimitiveSpec winograd_convolution(std::vector<PrimitivePostOp> post_ops) {
  PrimitiveSpec s =
      testing::same_size_3x3_convolution(kWinogradAlgorithm, {kActivation, testing::dense(kActivation), "nhwc"});
  s.post_ops = std::move(post_ops);
  return s;
}

//   kernel 0 on cpu:0: t = relu(conv(x, w0) + b0)          (t in arena 0)
//   kernel 1 on cpu:0: y = relu(conv(t, w1) + b1 + x)
// x and y are the model's input and output, channels last.
Manifest block_manifest() {
  Manifest m;
  m.abi_version = SY_MODEL_ABI_VERSION;
  m.switchyard_version = "test";
  m.entry = "main";
  m.devices = {{"cpu:0", "cpu", 0, "cpu", 0}};
  m.inputs = {{"x", DType::kFloat32, kActivation, 0, "block.sy:1:1"}};
  m.outputs = {{"y", DType::kFloat32, kActivation, 0, "block.sy:3:3"}};
  m.weights = {{"w0", DType::kFloat32, kWeights, 0, 0, 0},
               {"b0", DType::kFloat32, {kChannels}, 0, 0, 0},
               {"w1", DType::kFloat32, kWeights, 0, 0, 0},
               {"b1", DType::kFloat32, {kChannels}, 0, 0, 0}};
  layout_weights(m.weights, 1);
  const uint64_t activation_bytes = tensor_nbytes(DType::kFloat32, kActivation);
  m.arenas = {{0, "global", activation_bytes, activation_bytes}};
  PrimitivePostOp relu;
  relu.algorithm = "eltwise_relu";
  PrimitivePostOp residual;
  residual.kind = PrimitivePostOp::Kind::kSum;
  residual.input = 3;
  residual.operand = {kActivation, testing::dense(kActivation), "nhwc"};
  m.primitives = {winograd_convolution({relu}), winograd_convolution({residual, relu})};
  for (int k = 0; k < 2; ++k) {
    ManifestKernel kernel;
    kernel.name = k == 0 ? "conv_relu" : "conv_add_relu";
    kernel.span = "block.sy:" + std::to_string(k + 2) + ":3";
    kernel.kind = "dnnl";
    kernel.primitive = k;
    kernel.weights = 2 * k;
    m.kernels.push_back(kernel);
  }
  return m;
}

std::vector<uint8_t> block_weights(const Manifest& m) {
  std::vector<uint8_t> bytes(size_t(m.weights.back().offset + m.weights.back().nbytes));
  for (size_t i = 0; i < m.weights.size(); ++i) {
    // Weights of about 1/sqrt(fan-in) keep the activations near 1.
    std::vector<float> values = testing::random_values(m.weights[i].nbytes / sizeof(float), unsigned(100 + i));
    for (float& v : values) v *= i % 2 == 0 ? 0.06f : 0.5f;
    std::memcpy(bytes.data() + m.weights[i].offset, values.data(), m.weights[i].nbytes);
  }
  return bytes;
}

std::string block_source(const Manifest& m) {
  auto offset = [&](int weight) { return std::to_string(weight_offset_in_block(m, weight)); };
  return R"(// A ResNet basic block written by hand (tests/cpp/runtime/concurrent_runs_test.cc).
#include "switchyard/model_abi.h"

extern "C" int sy_model_abi_version(void) { return SY_MODEL_ABI_VERSION; }

extern "C" const char* sy_model_description(void) {
  return R"sy_description()" +
         model_description(m) + R"()sy_description";
}

extern "C" int sy_model_run(const SyRunArgs* args) {
  const SyRuntimeServices* rt = args->services;
  const char* weights = static_cast<const char*>(args->weights[0]);
  const void* w0 = weights + )" +
         offset(0) + R"(;
  const void* b0 = weights + )" +
         offset(1) + R"(;
  const void* w1 = weights + )" +
         offset(2) + R"(;
  const void* b1 = weights + )" +
         offset(3) + R"(;
  void* t = args->arenas[0];

  rt->kernel_begin(rt->ctx, 0);
  const void* const conv0_inputs[] = {args->inputs[0], w0, b0};
  void* const conv0_outputs[] = {t};
  rt->run_primitive(rt->ctx, 0, conv0_inputs, conv0_outputs);
  rt->kernel_end(rt->ctx, 0);

  rt->kernel_begin(rt->ctx, 1);
  const void* const conv1_inputs[] = {t, w1, b1, args->inputs[0]};
  void* const conv1_outputs[] = {args->outputs[0]};
  rt->run_primitive(rt->ctx, 0, conv1_inputs, conv1_outputs);
  rt->kernel_end(rt->ctx, 1);
  return 0;
}
)";
}

std::string write_block_artifact() {
  Manifest manifest = block_manifest();
  std::vector<uint8_t> weights = block_weights(manifest);
  manifest.hashes.weights_bin = weights_checksum_hex(manifest.format_version, weights.data(), weights.size());
  std::string dir = testing::scratch_dir("concurrent_block");
  std::string so_path = dir + "_model.so";
  testing::compile_model(block_source(manifest), so_path);
  testing::write_artifact(dir, so_path, manifest, weights);
  return dir;
}

NDArray block_input(int seed) {
  NDArray x(DType::kFloat32, kActivation);
  std::vector<float> values = testing::random_values(size_t(x.numel()), unsigned(seed + 1));
  std::memcpy(x.data(), values.data(), values.size() * sizeof(float));
  return x;
}

TEST(ConcurrentRuns, AResidualBlockOfWinogradConvolutionsRunFromEightThreadsMatchesItsSequentialRunsBitForBit) {
  const std::string dir = write_block_artifact();
  // One thread per device: the report's runs went wrong without any parallel work inside a run.
  for (int device_threads : {1, 2}) {
    SCOPED_TRACE("loaded with " + std::to_string(device_threads) + " threads");
    auto artifact = Artifact::load(dir, LoadOptions{device_threads});
    std::vector<NDArray> inputs, expected;
    for (int t = 0; t < kThreads; ++t) {
      inputs.push_back(block_input(t));
      expected.push_back(artifact->run({inputs.back()}).outputs[0]);
      ASSERT_TRUE(artifact->run({inputs.back()}).outputs[0].bitwise_equal(expected.back())) << "input " << t;
    }
    std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int run = 0; run < kRunsPerThread; ++run) {
          try {
            if (!artifact->run({inputs[size_t(t)]}).outputs[0].bitwise_equal(expected[size_t(t)]))
              ++mismatches[size_t(t)];
          } catch (const std::exception&) {
            ++failures[size_t(t)];
          }
        }
      });
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t << " of " << kRunsPerThread << " runs";
      EXPECT_EQ(failures[size_t(t)], 0) << "thread " << t;
    }
  }
}

}  // namespace concurrent_runs_test
}  // namespace switchyard
