// Compiled artifacts against the reference interpreter: random modules on
// two devices, and hand-written programs with lets, tuples, global function
// calls and if.
#include <gtest/gtest.h>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "runtime/primitive_json.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "support/random_module.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_differential_test {

// Builds `mod`, runs it on inputs from each seed and compares with the
// interpreter; returns the manifest.
Manifest expect_matches_interpreter(const IRModule& mod, const std::string& devices, const std::string& name,
                                    const std::vector<uint64_t>& input_seeds = {1}) {
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options(devices), dir);
  auto artifact = Artifact::load(dir);
  for (uint64_t seed : input_seeds) {
    std::map<std::string, NDArray> inputs = random_inputs(mod, seed);
    std::vector<NDArray> expected = interpret(mod, inputs);
    std::vector<NDArray> actual = artifact->run(inputs).outputs;
    EXPECT_EQ(actual.size(), expected.size()) << name;
    for (size_t i = 0; i < actual.size() && i < expected.size(); ++i)
      EXPECT_EQ(compare_arrays(actual[i], expected[i], 1e-4, 1e-4), "") << name << " output " << i;
  }
  return artifact->manifest();
}

TEST(AotDifferential, RandomModulesOnTwoDevicesMatchTheInterpreter) {
  RandomModuleOptions options;
  options.use_control_flow = false;
  options.num_nodes = 12;
  size_t copies = 0;
  size_t kernels_on[2] = {0, 0};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE("random module seed " + std::to_string(seed));
    Manifest manifest =
        expect_matches_interpreter(random_module(seed, options), "cpu:0,cpu:1", "random_" + std::to_string(seed));
    copies += manifest.copies.size();
    for (const ManifestKernel& k : manifest.kernels) ++kernels_on[k.device];
  }
  // The modules really are split across the two devices.
  EXPECT_GT(copies, 0u);
  EXPECT_GT(kernels_on[0], 0u);
  EXPECT_GT(kernels_on[1], 0u);
}

TEST(AotDifferential, LetsTuplesAndGlobalFunctionCalls) {
  IRModule mod = parse_module(
      "def @layer(%x: Tensor[(2, 8), float32], %w: Tensor[(8, 8), float32]) -> Tensor[(2, 8), float32] {\n"
      "  nn.relu(nn.dense(%x, %w))\n"
      "}\n"
      "def @main(%x: Tensor[(2, 8), float32] @cpu:0, %w: Tensor[(8, 8), float32])\n"
      "    -> (Tensor[(2, 8), float32], Tensor[(2, 8), float32], Tensor[(2, 8), float32]) {\n"
      "  let %h = @layer(%x, %w);\n"
      "  let %o = @layer(%h, %w);\n"
      "  let %pair = (%o, add(%h, 1f));\n"
      "  (%pair.1, %pair.0, %x)\n"
      "}\n",
      "lets_tuples.sy");
  expect_matches_interpreter(mod, "cpu:0", "lets_tuples", {1, 2});
}

TEST(AotDifferential, IfOnAHostBoolTakesEachBranch) {
  IRModule mod = parse_module(
      "def @main(%flag: bool, %x: Tensor[(3, 5), float32]) -> (Tensor[(3, 5), float32], Tensor[(3), float32]) {\n"
      "  let %y = exp(%x);\n"
      "  let %r = if (%flag) {\n"
      "    negative(%y)\n"
      "  } else {\n"
      "    add(%y, %x)\n"
      "  };\n"
      "  (%r, sum(%r, axis=[1]))\n"
      "}\n",
      "if.sy");
  // Two input seeds with the flag true and two with it false.
  std::vector<uint64_t> seeds;
  int with_flag[2] = {0, 0};
  for (uint64_t seed = 0; seed < 100 && seeds.size() < 4; ++seed) {
    int flag = random_inputs(mod, seed).at("flag").get_as_double(0) != 0;
    if (with_flag[flag] < 2) {
      ++with_flag[flag];
      seeds.push_back(seed);
    }
  }
  ASSERT_EQ(seeds.size(), 4u);
  expect_matches_interpreter(mod, "cpu:0", "if", seeds);
}

// GPT-2's attention scores: a batched product with the key transposed, plus
// a causal mask broadcast over the heads. As a binary post-op the mask sent
// oneDNN's matmul to its reference loops (40x its brgemm kernel); it is
// added by a loop after the primitive instead, and every primitive of the
// artifact runs jit kernels.
TEST(AotDifferential, AMaskThatWouldSendAProductToReferenceLoopsIsAddedAfterIt) {
  IRModule mod = parse_module(
      "def @main(%q: Tensor[(12, 64, 32), float32], %k: Tensor[(12, 64, 32), float32],\n"
      "          %mask: Tensor[(1, 64, 64), float32]) {\n"
      "  add(matmul(%q, transpose(%k, axes=[0, 2, 1])), %mask)\n"
      "}\n",
      "scores.sy");
  Manifest manifest = expect_matches_interpreter(mod, "cpu:0", "masked_scores");
  ASSERT_FALSE(manifest.primitives.empty());
  for (const PrimitiveSpec& spec : manifest.primitives)
    EXPECT_FALSE(dnnl_is_reference_implementation(dnnl_implementation(spec))) << primitive_spec_text(spec);
}

// EfficientNet's SiLU (x * sigmoid(x)) and MobileNetV3's hardswish (x *
// HardSigmoid(x)) after a convolution are oneDNN post-ops (swish and
// hardswish), so the convolution is a primitive alone and its result may
// keep a layout; as loops after the primitive they kept every such
// convolution's result dense, with a reorder into and out of each. Inputs
// scaled so that the gates saturate at both ends.
TEST(AotDifferential, SelfGatedActivationsAfterAConvolutionArePostOps) {
  const std::pair<std::string, std::string> cases[] = {
      {"multiply(%0, sigmoid(%0))", "eltwise_swish"},
      {"multiply(clip(add(multiply(%0, 0.16666667f), 0.5f), a_min=0.0, a_max=1.0), %0)", "eltwise_hardswish"}};
  for (const auto& [activation, algorithm] : cases) {
    SCOPED_TRACE(activation);
    IRModule mod = parse_module(
        "def @main(%x: Tensor[(1, 5, 9, 7), float32], %w: Tensor[(16, 5, 3, 3), float32], %b: Tensor[(16), float32]) {\n"
        "  %0 = nn.bias_add(nn.conv2d(multiply(%x, 30f), %w, padding=[1, 1, 1, 1]), %b);\n"
        "  " + activation + "\n}\n",
        "gated.sy");
    Manifest manifest = expect_matches_interpreter(mod, "cpu:0", "gated_" + algorithm, {1, 2});
    bool fused = false;
    for (const PrimitiveSpec& spec : manifest.primitives)
      for (const PrimitivePostOp& post : spec.post_ops) fused = fused || post.algorithm == algorithm;
    EXPECT_TRUE(fused) << "oneDNN computes the " << algorithm;
    EXPECT_EQ(manifest.kernels.size(), 2u) << "the scaling, then the convolution with its activation";
  }
}

}  // namespace aot_differential_test
}  // namespace switchyard::testing
