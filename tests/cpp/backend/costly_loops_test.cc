// The build's warning about convolutions, pools and products that run as
// generated loops (lower/costly_loops.h): the work estimate per operator,
// and a build that warns naming the node where a float16 convolution (which
// oneDNN is not asked to run) carries the model's work, and stays silent
// where every convolution is a library call or the loop's share is small.
#include <gtest/gtest.h>

#include <map>

#include "aot_test_util.h"
#include "ir/functor.h"
#include "lower/costly_loops.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard::testing {
namespace costly_loops_test {

// The estimate of every operator call in @main, by operator name.
std::map<std::string, double> flops_by_operator(const std::string& text) {
  IRModule mod = infer_type(parse_module(text, "model.sy"));
  std::map<std::string, double> flops;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    if (const CallNode* call = as<CallNode>(e))
      if (const OpNode* op = as<OpNode>(call->op)) flops[op->name] += estimated_flops(*call);
  });
  return flops;
}

TEST(EstimatedFlops, CountsTwiceTheMultiplyAddsOfProductsAndConvolutions) {
  auto flops = flops_by_operator(
      "def @main(%x: Tensor[(1, 8, 10, 10), float32], %w: Tensor[(16, 4, 3, 3), float32],\n"
      "          %a: Tensor[(6, 32), float32], %d: Tensor[(24, 32), float32],\n"
      "          %b: Tensor[(2, 5, 7), float32], %c: Tensor[(2, 9, 7), float32], %m: Tensor[(32, 3), float32]) {\n"
      "  (nn.conv2d(%x, %w, padding=[1, 1], groups=2), nn.dense(%a, %d), nn.batch_matmul(%b, %c), matmul(%a, %m))\n"
      "}\n");
  // Grouped: each of the 1*16*10*10 outputs sums 4 channels * 3 * 3 taps.
  EXPECT_EQ(flops["nn.conv2d"], 2.0 * 1600 * 36);
  EXPECT_EQ(flops["nn.dense"], 2.0 * 6 * 24 * 32);
  EXPECT_EQ(flops["nn.batch_matmul"], 2.0 * 2 * 5 * 9 * 7);  // y is (B, N, K): transpose_b
  EXPECT_EQ(flops["matmul"], 2.0 * 6 * 3 * 32);
}

TEST(EstimatedFlops, CountsWindowElementsOfPoolsAndResultElementsOfTheRest) {
  auto flops = flops_by_operator(
      "def @main(%x: Tensor[(1, 4, 8, 8), float32]) {\n"
      "  (nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]), nn.avg_pool2d(%x, pool_size=[2]),\n"
      "   nn.global_avg_pool2d(%x), nn.relu(%x))\n"
      "}\n");
  EXPECT_EQ(flops["nn.max_pool2d"], 4.0 * 4 * 4 * 9);
  EXPECT_EQ(flops["nn.avg_pool2d"], 4.0 * 7 * 7 * 4);
  EXPECT_EQ(flops["nn.global_avg_pool2d"], 4.0 * 8 * 8);
  EXPECT_EQ(flops["nn.relu"], 4.0 * 8 * 8);
}

std::vector<DiagnosticSink::Diagnostic> build_warnings(const std::string& name, const std::string& text) {
  BuildOptions options = aot_options("cpu:0");
  build_artifact(parse_module(text, "model.sy"), options, aot_scratch_dir(name) + "/artifact");
  return options.diagnostics->diagnostics();
}

TEST(CostlyLoops, AFloat16ConvolutionIsNamedWithItsShareOfTheWork) {
  auto warnings = build_warnings("costly_half_conv",
                                 "def @main(%x: Tensor[(1, 8, 16, 16), float16], %w: Tensor[(16, 8, 3, 3), float16]) {\n"
                                 "  nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))\n"
                                 "}\n");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].pass, kCostlyLoopCheck);
  // 2 * (16 * 16 * 16 outputs) * (8 * 3 * 3 taps) of the convolution, 4096 of the relu.
  const std::string& text = warnings[0].text;
  EXPECT_EQ(text.rfind("model.sy:2:11: warning: nn.conv2d 1x8x16x16 float16 by 16x8x3x3 float16 -> "
                       "1x16x16x16 float16 runs as a generated loop (kernel 'fused_nn_conv2d_nn_relu_", 0),
            0u)
      << text;
  EXPECT_NE(text.find("not a library primitive, and carries 99% of the model's estimated 0.59 MFLOPs: expect it to be "
                      "slow"),
            std::string::npos)
      << text;
}

TEST(CostlyLoops, LibraryConvolutionsAreNotWarnedAbout) {
  auto warnings = build_warnings("costly_float_conv",
                                 "def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(16, 8, 3, 3), float32]) {\n"
                                 "  nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))\n"
                                 "}\n");
  EXPECT_TRUE(warnings.empty()) << warnings[0].text;
}

TEST(CostlyLoops, ALoopWithASmallShareOfTheWorkIsNotWarnedAbout) {
  // The float16 1x1 convolution is 2 * 4 * 16 * 16 * 1 of the float32
  // convolution's 2 * 64 * 16 * 16 * 576 estimated operations: far below 5%.
  auto warnings = build_warnings(
      "costly_small_loop",
      "def @main(%x: Tensor[(1, 64, 16, 16), float32], %w: Tensor[(64, 64, 3, 3), float32],\n"
      "          %h: Tensor[(1, 1, 16, 16), float16], %v: Tensor[(4, 1, 1, 1), float16]) {\n"
      "  (nn.conv2d(%x, %w, padding=[1, 1]), nn.conv2d(%h, %v))\n"
      "}\n");
  EXPECT_TRUE(warnings.empty()) << warnings[0].text;
}

}  // namespace costly_loops_test
}  // namespace switchyard::testing
