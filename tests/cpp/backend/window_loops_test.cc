// The generated window loops (codegen/window_loops.cc) for float32, where
// oneDNN would otherwise run them: convolutions whose output channels fall
// in blocks of 8, 4, 2 or 1 per group (group counts and widths that divide
// neither 8 nor 16 included), strides, dilations, asymmetric padding, odd
// sizes, rows wider than one column tile, windows wider than the image, and
// the pools with and without ceil_mode and padding counted, each compiled
// and compared with the interpreter. Pools are equal to the last bit, since
// each output takes its taps in the reference's order and precision (a
// global pool's simd lanes reassociate its double sum: within 1e-7);
// convolutions sum in float32 with fused multiply-adds (within 1e-4). They take
// NCHW data and OIHW weights only: PlanLayouts plans other layouts only for
// library primitives (target_libraries_test.cc builds whole programs on
// "cpu -libs=none").
#include <gtest/gtest.h>

#include <limits>

#include "kernel_cases.h"

namespace switchyard::testing {
namespace window_loops_test {

KernelCase loops(std::string name, std::string params, std::string body, double tolerance = 0) {
  return {std::move(name), "def @main(" + params + ") {\n" + body + "\n}\n", -2, 2, -3, 5, tolerance, {}, true};
}

// float32 convolutions sum in float with fused multiply-adds, in their own
// order, as oneDNN does (docs/operators.md, "Edge cases"): their sums of up
// to 45 terms of magnitude up to 4 round differently from the
// interpreter's double sums, by a few float32 ulps of the terms, far
// inside 1e-4 relative plus absolute. A wrong tap or weight is off by a
// whole term.
constexpr double kFloatSums = 1e-4;

KernelCase convolution(std::string name, std::string params, std::string body) {
  return loops(std::move(name), std::move(params), std::move(body), kFloatSums);
}

std::string image(int64_t batch, int64_t channels, int64_t height, int64_t width) {
  return "%x: Tensor[(" + std::to_string(batch) + ", " + std::to_string(channels) + ", " + std::to_string(height) +
         ", " + std::to_string(width) + "), float32]";
}

std::string weight(int64_t out, int64_t in, int64_t kh, int64_t kw) {
  return "%w: Tensor[(" + std::to_string(out) + ", " + std::to_string(in) + ", " + std::to_string(kh) + ", " +
         std::to_string(kw) + "), float32]";
}

std::vector<KernelCase> convolution_cases() {
  return {
      // Blocks of 8 output channels; odd height and width.
      convolution("dense_3x3_block8", image(1, 5, 9, 11) + ", " + weight(16, 5, 3, 3), "  nn.conv2d(%x, %w, padding=[1, 1])"),
      // Blocks of 4, 2 and 1 (12, 6 and 5 output channels).
      convolution("pointwise_block4", image(2, 7, 5, 3) + ", " + weight(12, 7, 1, 1), "  nn.conv2d(%x, %w)"),
      convolution("block2_strided", image(1, 3, 10, 7) + ", " + weight(6, 3, 3, 3),
            "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1])"),
      convolution("block1_asymmetric", image(1, 3, 8, 9) + ", " + weight(5, 3, 3, 2),
            "  nn.conv2d(%x, %w, padding=[2, 0, 1, 3])"),
      // Depthwise (one channel a group, 7 and 9 groups), stride 1 and 2.
      convolution("depthwise_7", image(1, 7, 11, 9) + ", " + weight(7, 1, 3, 3),
            "  nn.conv2d(%x, %w, padding=[1, 1], groups=7)"),
      convolution("depthwise_9_stride2", image(2, 9, 12, 13) + ", " + weight(9, 1, 3, 3),
            "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=9)"),
      // Depthwise with a channel multiplier of 3 and 2.
      convolution("depthwise_multiplier3", image(1, 5, 7, 7) + ", " + weight(15, 1, 3, 3),
            "  nn.conv2d(%x, %w, padding=[1, 1], groups=5)"),
      convolution("depthwise_multiplier2", image(1, 3, 6, 5) + ", " + weight(6, 1, 5, 5),
            "  nn.conv2d(%x, %w, padding=[2, 2], groups=3)"),
      // Groups that divide neither 8 nor 16: 3 groups of 4 -> 4, 5 groups of 2 -> 3, 6 groups of 3 -> 2.
      convolution("grouped_3", image(1, 12, 7, 9) + ", " + weight(12, 4, 3, 3),
            "  nn.conv2d(%x, %w, padding=[1, 1], groups=3)"),
      convolution("grouped_5", image(1, 10, 9, 5) + ", " + weight(15, 2, 3, 3),
            "  nn.conv2d(%x, %w, padding=[1, 1], groups=5)"),
      convolution("grouped_6_block2", image(2, 18, 5, 5) + ", " + weight(12, 3, 3, 3),
            "  nn.conv2d(%x, %w, strides=[2, 1], padding=[0, 1], groups=6)"),
      // Dilation, alone and with stride 2.
      convolution("dilated_2", image(1, 4, 13, 11) + ", " + weight(8, 4, 3, 3),
            "  nn.conv2d(%x, %w, padding=[2, 2], dilation=[2, 2])"),
      convolution("dilated_strided", image(1, 3, 15, 14) + ", " + weight(4, 3, 3, 3),
            "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 2], dilation=[3, 2])"),
      // A window wider than the image: every tap of some columns is padding.
      convolution("window_wider_than_image", image(1, 2, 3, 2) + ", " + weight(3, 2, 5, 5),
            "  nn.conv2d(%x, %w, padding=[2, 2])"),
      // Rows of 261 columns: three column tiles, the last of 5.
      convolution("wide_rows_tiled", image(1, 3, 2, 263) + ", " + weight(8, 3, 1, 3), "  nn.conv2d(%x, %w)"),
      convolution("wide_rows_strided", image(1, 2, 3, 530) + ", " + weight(2, 2, 3, 3),
            "  nn.conv2d(%x, %w, strides=[1, 2], padding=[1, 1])"),
      // An epilogue stored with each result.
      convolution("bias_relu_epilogue",
            image(1, 6, 7, 7) + ", " + weight(6, 3, 3, 3) + ", %b: Tensor[(6), float32]",
            "  %0 = nn.conv2d(%x, %w, padding=[1, 1], groups=2);\n  %1 = nn.bias_add(%0, %b);\n  nn.relu(%1)"),
      // ConvTranspose's form: zeros between the pixels (a kernel before), a 4x4 window.
      convolution("transposed_form", image(1, 4, 9, 9) + ", " + weight(3, 4, 4, 4), "  nn.conv2d(%x, %w, padding=[2, 2])"),
  };
}

std::vector<KernelCase> pool_cases() {
  const std::string odd = image(2, 3, 13, 11);
  return {
      loops("max_3x3_s2_p1", odd, "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])"),
      loops("max_3x3_s2_ceil", odd, "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)"),
      loops("max_dilated", odd, "  nn.max_pool2d(%x, pool_size=[3, 2], dilation=[2, 3], padding=[1, 2])"),
      loops("max_wide_rows", image(1, 2, 3, 300), "  nn.max_pool2d(%x, pool_size=[2, 3], padding=[0, 1])"),
      loops("avg_exclude_pad", odd, "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1])"),
      loops("avg_include_pad", odd, "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1], count_include_pad=True)"),
      loops("avg_ceil_exclude", odd, "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)"),
      loops("avg_ceil_include_pad", odd,
            "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, "
            "count_include_pad=True)"),
      loops("avg_asymmetric_include_pad", image(1, 2, 6, 7),
            "  nn.avg_pool2d(%x, pool_size=[2, 3], strides=[2, 2], padding=[0, 1, 1, 2], count_include_pad=True)"),
      loops("avg_wide_rows", image(1, 1, 4, 257), "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1])"),
      loops("global_avg_epilogue", image(2, 5, 7, 7), "  %0 = nn.global_avg_pool2d(%x);\n  sigmoid(%0)", 1e-7),
      loops("global_avg_odd", image(1, 3, 3, 5), "  nn.global_avg_pool2d(%x)", 1e-7),
  };
}

TEST(WindowLoops, ConvolutionsMatchTheInterpreter) {
  const CaseBatch batch = build_cases(convolution_cases(), "window_loop_convolutions");
  TestServices two(2);
  for (const PreparedCase& p : batch.cases) {
    EXPECT_FALSE(p.source.primitive) << p.spec.name << " runs a library primitive";
    expect_matches_interpreter(batch, p, two);
  }
}

TEST(WindowLoops, PoolsMatchTheInterpreter) {
  const CaseBatch batch = build_cases(pool_cases(), "window_loop_pools");
  TestServices two(2);
  for (const PreparedCase& p : batch.cases) {
    EXPECT_FALSE(p.source.primitive) << p.spec.name << " runs a library primitive";
    expect_matches_interpreter(batch, p, two);
  }
}

// A float32 convolution's accumulators are floats stepped by fused
// multiply-adds (one rounding each, vfmadd where the CPU has it); a float16
// one still sums in double, as the reference does.
TEST(WindowLoops, Float32ConvolutionsSumInFloatWithFusedMultiplyAdds) {
  const std::string body = "  nn.conv2d(%x, %w, padding=[1, 1])";
  PreparedCase f32 = prepare_case(convolution("float32_sums", image(1, 3, 5, 6) + ", " + weight(4, 3, 3, 3), body));
  EXPECT_NE(f32.source.code.find("float acc[32];"), std::string::npos) << f32.source.code;
  EXPECT_NE(f32.source.code.find("__builtin_fmaf(x0, w0_0, acc[ow - first])"), std::string::npos) << f32.source.code;
  EXPECT_EQ(f32.source.code.find("double(x0)"), std::string::npos) << f32.source.code;
  const std::string half_params = "%x: Tensor[(1, 3, 5, 6), float16], %w: Tensor[(4, 3, 3, 3), float16]";
  PreparedCase f16 = prepare_case(loops("float16_sums", half_params, body));
  EXPECT_NE(f16.source.code.find("double acc[32];"), std::string::npos) << f16.source.code;
  EXPECT_EQ(f16.source.code.find("fma"), std::string::npos) << f16.source.code;
}

// A max pool's NaN wins wherever it lies in a window, as in max.
TEST(WindowLoops, AMaxPoolKeepsNaN) {
  CaseBatch batch = build_cases({loops("max_nan", image(1, 1, 5, 5), "  nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1])")},
                                "window_loop_nan");
  PreparedCase& p = batch.cases[0];
  p.kernel_inputs[0].as<float>()[12] = std::numeric_limits<float>::quiet_NaN();
  p.inputs.at("x").as<float>()[12] = std::numeric_limits<float>::quiet_NaN();
  expect_matches_interpreter(batch, p, TestServices(1));
}

}  // namespace window_loops_test
}  // namespace switchyard::testing
