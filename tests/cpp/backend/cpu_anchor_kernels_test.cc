// Generated CPU kernels of the reductions, normalisations and anchors
// (through oneDNN for float32, plain loops for other dtypes), alone and with
// fused prologues and epilogues, compiled and compared with the reference
// interpreter.
#include <gtest/gtest.h>

#include "kernel_cases.h"

namespace switchyard::testing {
namespace cpu_anchor_kernels_test {

std::string main_of(const std::string& params, const std::string& body) {
  return "def @main(" + params + ") {\n" + body + "\n}\n";
}

std::vector<KernelCase> reduction_cases() {
  const std::string x3 = "%x: Tensor[(3, 4, 5), float32]";
  return {
      {"sum_last", main_of(x3, "  sum(%x, axis=[2])")},
      {"sum_all", main_of(x3, "  sum(%x)")},
      {"sum_first_keepdims", main_of(x3, "  sum(%x, axis=[0], keepdims=True)")},
      {"sum_exclude", main_of(x3, "  sum(%x, axis=[1], exclude=True)")},
      {"sum_nothing", main_of(x3, "  sum(%x, axis=[])")},
      {"sum_wide_rows", main_of("%x: Tensor[(3, 700), float32]", "  sum(%x, axis=[0])")},
      {"mean_middle", main_of(x3, "  mean(%x, axis=[1])")},
      {"mean_int", main_of("%x: Tensor[(3, 4), int32]", "  mean(%x, axis=[1])"), -2, 2, -50, 50},
      {"sum_int64", main_of("%x: Tensor[(3, 4), int64]", "  sum(%x)"), -2, 2, -50, 50},
      {"max_last", main_of(x3, "  max(%x, axis=[-1])")},
      {"max_first", main_of(x3, "  max(%x, axis=[0, 1])")},
      {"max_int", main_of("%x: Tensor[(6, 7), int32]", "  max(%x, axis=[0])"), -2, 2, -100, 100},
      {"prod_last", main_of(x3, "  prod(%x, axis=[2])")},
      {"prod_first_keepdims", main_of(x3, "  prod(%x, axis=[0, 1], keepdims=True)")},
      {"prod_all", main_of(x3, "  prod(%x)"), 0.5, 1.5},
      {"prod_int8_wraps", main_of("%x: Tensor[(6, 7), int8]", "  prod(%x, axis=[0])"), -2, 2, -100, 100},
      {"prod_int64", main_of("%x: Tensor[(3, 4), int64]", "  prod(%x, axis=[1])"), -2, 2, -50, 50},
      {"sum_float64", main_of("%x: Tensor[(4, 9), float64]", "  %0 = exp(%x);\n  %1 = sum(%0, axis=[1]);\n  log(%1)"),
       -2, 2, 0, 0, 1e-14},
      {"mean_float64", main_of("%x: Tensor[(4, 9), float64]", "  mean(%x, axis=[0])"), -2, 2, 0, 0, 1e-15},
      {"mean_uint64", main_of("%x: Tensor[(3, 4), uint64]", "  %0 = subtract(%x, 3u64);\n  mean(%0, axis=[1])"),
       -2, 2, 0, 6, 0},
      {"max_uint64", main_of("%x: Tensor[(6, 7), uint64]", "  %0 = subtract(%x, 50u64);\n  max(%0, axis=[0])"),
       -2, 2, 0, 100, 0},
      {"max_int16", main_of("%x: Tensor[(6, 7), int16]", "  max(%x, axis=[0])"), -2, 2, -100, 100, 0},
      {"sum_uint32", main_of("%x: Tensor[(6, 7), uint32]", "  %0 = subtract(%x, 50u32);\n  sum(%0, axis=[1])"),
       -2, 2, 0, 100, 0},
      {"prod_uint16_wraps", main_of("%x: Tensor[(6, 7), uint16]", "  prod(%x, axis=[0])"), -2, 2, 0, 300, 0},
      {"sum_half", main_of("%x: Tensor[(4, 9), float16]", "  sum(%x, axis=[1])"), -1, 1, 0, 0, 1e-3},
      {"prologue", main_of(x3, "  %0 = exp(%x);\n  sum(%0, axis=[1])")},
      {"broadcast_prologue", main_of(x3 + ", %b: Tensor[(5), float32]", "  %0 = add(%x, %b);\n  mean(%0, axis=[0])")},
      {"epilogue", main_of(x3, "  %0 = multiply(%x, %x);\n  %1 = sum(%0, axis=[2]);\n  sqrt(%1)")},
      {"softmax", main_of("%x: Tensor[(4, 10), float32]", "  nn.softmax(%x)"), -5, 5},
      {"softmax_middle_axis", main_of(x3, "  nn.softmax(%x, axis=1)"), -5, 5},
      {"softmax_epilogue", main_of("%x: Tensor[(4, 10), float32]", "  %0 = nn.softmax(%x);\n  multiply(%0, 3f)")},
      {"softmax_half", main_of("%x: Tensor[(4, 10), float16]", "  nn.softmax(%x)"), -2, 2, 0, 0, 1e-2},
      // float64 keeps its values in double: tolerances float32 could not meet.
      {"softmax_float64", main_of("%x: Tensor[(4, 1100), float64]", "  %0 = nn.softmax(%x);\n  multiply(%0, 3f64)"),
       -5, 5, 0, 0, 1e-13},
      {"layer_norm_float64",
       main_of("%x: Tensor[(4, 16), float64], %g: Tensor[(16), float64], %b: Tensor[(16), float64]",
               "  nn.layer_norm(%x, %g, %b)"),
       -2, 2, 0, 0, 1e-13},
      {"batch_norm_float64",
       main_of("%x: Tensor[(2, 3, 4, 5), float64], %g: Tensor[(3), float64], %b: Tensor[(3), float64], "
               "%m: Tensor[(3), float64], %v: Tensor[(3), float64]",
               "  nn.batch_norm(%x, %g, %b, %m, %v)"),
       0.5, 2, 0, 0, 1e-13},
      {"layer_norm",
       main_of("%x: Tensor[(4, 16), float32], %g: Tensor[(16), float32], %b: Tensor[(16), float32]",
               "  nn.layer_norm(%x, %g, %b)"),
       -2, 2, 0, 0, 1e-3},
      {"layer_norm_plain",
       main_of(x3 + ", %g: Tensor[(4), float32], %b: Tensor[(4), float32]",
               "  %0 = nn.layer_norm(%x, %g, %b, axis=1, center=False, scale=False);\n  nn.relu(%0)"),
       -2, 2, 0, 0, 1e-3},
      {"batch_norm",
       main_of("%x: Tensor[(2, 3, 4, 5), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32], "
               "%m: Tensor[(3), float32], %v: Tensor[(3), float32]",
               "  nn.batch_norm(%x, %g, %b, %m, %v)"),
       0.5, 2, 0, 0, 1e-3},
      // One parameter as three arguments: the kernel has three inputs, not five.
      {"batch_norm_shared_statistics",
       main_of("%x: Tensor[(2, 3, 4, 5), float16], %s: Tensor[(3), float16], %v: Tensor[(3), float16]",
               "  nn.batch_norm(%x, %s, %s, %s, %v)"),
       0.5, 2, 0, 0, 1e-2},
  };
}

std::vector<KernelCase> anchor_cases() {
  const std::string image = "%x: Tensor[(2, 4, 9, 9), float32]";
  return {
      {"dense", main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32]", "  nn.dense(%x, %w)")},
      {"dense_3d", main_of("%x: Tensor[(2, 3, 8), float32], %w: Tensor[(5, 8), float32]", "  nn.dense(%x, %w)")},
      {"dense_add_relu", main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32], %b: Tensor[(16), float32]",
                                 "  %0 = nn.dense(%x, %w);\n  %1 = add(%0, %b);\n  nn.relu(%1)")},
      {"dense_full_operand", main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32], "
                                     "%y: Tensor[(3, 16), float32]",
                                     "  %0 = nn.dense(%x, %w);\n  %1 = subtract(%0, %y);\n  %2 = tanh(%1);\n"
                                     "  multiply(%2, 2f)")},
      {"dense_unmapped_epilogue", main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32], "
                                          "%y: Tensor[(16), float32]",
                                          "  %0 = nn.dense(%x, %w);\n  %1 = subtract(%y, %0);\n  erf(%1)")},
      {"dense_cast",
       main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32]",
               "  %0 = nn.dense(%x, %w);\n  cast(%0, dtype=\"float16\")"),
       -2, 2, 0, 0, 1e-3},
      {"matmul", main_of("%a: Tensor[(3, 7), float32], %b: Tensor[(7, 5), float32]", "  matmul(%a, %b)")},
      {"matmul_batched",
       main_of("%a: Tensor[(2, 1, 3, 4), float32], %b: Tensor[(5, 4, 6), float32]", "  matmul(%a, %b)")},
      {"matmul_vector_left", main_of("%a: Tensor[(4), float32], %b: Tensor[(2, 4, 5), float32]", "  matmul(%a, %b)")},
      {"matmul_vector_right", main_of("%a: Tensor[(3, 4), float32], %b: Tensor[(4), float32], %c: Tensor[(3), float32]",
                                      "  %0 = matmul(%a, %b);\n  add(%0, %c)")},
      {"batch_matmul",
       main_of("%x: Tensor[(2, 3, 4), float32], %y: Tensor[(2, 5, 4), float32]", "  nn.batch_matmul(%x, %y)")},
      {"batch_matmul_transposed_a", main_of("%x: Tensor[(1, 4, 3), float32], %y: Tensor[(2, 4, 5), float32]",
                                            "  nn.batch_matmul(%x, %y, transpose_a=True, transpose_b=False)")},
      {"conv2d", main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32]", "  nn.conv2d(%x, %w)"), -2, 2, 0, 0, 1e-3},
      {"conv2d_strided",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32]",
               "  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], dilation=[2, 1])"),
       -2, 2, 0, 0, 1e-3},
      {"conv2d_groups_bias_relu",
       main_of(image + ", %w: Tensor[(6, 2, 3, 3), float32], %b: Tensor[(6), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 0, 0, 1], groups=2);\n"
               "  %1 = nn.bias_add(%0, %b);\n  nn.relu(%1)"),
       -2, 2, 0, 0, 1e-3},
      // float64 anchors are plain loops in double (oneDNN takes float32 only).
      {"conv2d_float64", main_of("%x: Tensor[(1, 4, 6, 6), float64], %w: Tensor[(6, 4, 3, 3), float64]",
                                 "  nn.conv2d(%x, %w, padding=[1, 1])"),
       -2, 2, 0, 0, 1e-14},
      {"matmul_float64", main_of("%a: Tensor[(3, 7), float64], %b: Tensor[(7, 5), float64]", "  matmul(%a, %b)"), -2, 2,
       0, 0, 1e-14},
      {"avg_pool_float64", main_of("%x: Tensor[(1, 2, 6, 6), float64]",
                                   "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])"),
       -2, 2, 0, 0, 1e-15},
      {"max_pool_uint32", main_of("%x: Tensor[(1, 2, 6, 6), uint32]",
                                  "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])"),
       -2, 2, 0, 100, 0},
      {"max_pool", main_of(image, "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])")},
      {"max_pool_ceil", main_of(image, "  nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=True)")},
      {"avg_pool", main_of(image, "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])")},
      {"avg_pool_include_pad", main_of(image,
                                       "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1], "
                                       "count_include_pad=True)")},
      {"avg_pool_ceil_include_pad", main_of(image,
                                            "  nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], "
                                            "ceil_mode=True, count_include_pad=True)")},
      {"global_avg_pool", main_of(image, "  %0 = nn.global_avg_pool2d(%x);\n  sigmoid(%0)")},
      // Dtypes oneDNN does not take: plain loops.
      {"dense_int", main_of("%x: Tensor[(3, 8), int32], %w: Tensor[(4, 8), int32]", "  nn.dense(%x, %w)")},
      {"matmul_half", main_of("%a: Tensor[(2, 3, 4), float16], %b: Tensor[(4, 5), float16]", "  matmul(%a, %b)"), -1, 1,
       0, 0, 1e-2},
      {"batch_matmul_bfloat16",
       main_of("%x: Tensor[(2, 3, 4), bfloat16], %y: Tensor[(2, 5, 4), bfloat16]", "  nn.batch_matmul(%x, %y)"), -1, 1,
       0, 0, 2e-2},
      {"conv2d_int", main_of("%x: Tensor[(1, 4, 6, 6), int32], %w: Tensor[(2, 2, 3, 3), int32]",
                             "  %0 = nn.conv2d(%x, %w, groups=2, padding=[1, 1]);\n  nn.relu(%0)")},
      {"max_pool_int",
       main_of("%x: Tensor[(1, 2, 5, 5), int32]", "  nn.max_pool2d(%x, pool_size=[2, 2], padding=[1, 1])"), -2, 2, -100,
       100},
      {"avg_pool_half",
       main_of("%x: Tensor[(1, 2, 5, 5), float16]",
               "  nn.avg_pool2d(%x, pool_size=[2, 2], ceil_mode=True, strides=[2, 2])"),
       -1, 1, 0, 0, 1e-2},
      {"global_avg_pool_int", main_of("%x: Tensor[(1, 3, 4, 4), int64]", "  nn.global_avg_pool2d(%x)"), -2, 2, -9, 9},
  };
}

const CaseBatch& reductions() {
  static const CaseBatch built = build_cases(reduction_cases(), "reductions");
  return built;
}

const CaseBatch& anchors() {
  static const CaseBatch built = build_cases(anchor_cases(), "anchors");
  return built;
}

const PreparedCase& find_case(const CaseBatch& batch, const std::string& name) {
  for (const PreparedCase& p : batch.cases)
    if (p.spec.name == name) return p;
  throw std::runtime_error("no case " + name);
}

TEST(CpuAnchorKernels, ReductionsAndNormalisationsMatchTheInterpreter) {
  TestServices two(2);
  for (const PreparedCase& p : reductions().cases) expect_matches_interpreter(reductions(), p, two);
}

TEST(CpuAnchorKernels, ProductsConvolutionsAndPoolsMatchTheInterpreter) {
  TestServices two(2);
  for (const PreparedCase& p : anchors().cases) expect_matches_interpreter(anchors(), p, two);
}

TEST(CpuAnchorKernels, RepeatedRunsAgree) {
  const PreparedCase& p = find_case(anchors(), "dense_add_relu");
  TestServices serial(1);
  for (int run = 0; run < 3; ++run) expect_matches_interpreter(anchors(), p, serial);
}

TEST(CpuAnchorKernels, DenseEpilogueBecomesPostOps) {
  const KernelSource& source = find_case(anchors(), "dense_add_relu").source;
  ASSERT_TRUE(source.primitive);
  // The bias is the primitive's own argument; the rest are post-ops, and no code is left.
  EXPECT_FALSE(source.primitive->bias.empty());
  ASSERT_EQ(source.primitive->post_ops.size(), 1u);
  EXPECT_EQ(source.primitive->post_ops[0].algorithm, "eltwise_relu");
  EXPECT_TRUE(source.library_only()) << source.code;
}

TEST(CpuAnchorKernels, UnmappedEpilogueRunsAsALoopOverTheOutput) {
  const KernelSource& source = find_case(anchors(), "dense_unmapped_epilogue").source;
  ASSERT_TRUE(source.primitive);
  EXPECT_TRUE(source.primitive->post_ops.empty());
  EXPECT_NE(source.code.find("sy_erf("), std::string::npos) << source.code;
  EXPECT_NE(source.code.find("void epilogue("), std::string::npos) << source.code;
}

TEST(CpuAnchorKernels, OtherDtypesUsePlainLoops) {
  EXPECT_FALSE(find_case(anchors(), "dense_int").source.primitive);
  EXPECT_FALSE(find_case(anchors(), "avg_pool_ceil_include_pad").source.primitive);
  EXPECT_TRUE(find_case(anchors(), "avg_pool").source.primitive);
}

// One exponential per element, kept in the float32 output between passes, and
// float sums (vectorised; double ones run at half the width).
TEST(CpuAnchorKernels, SoftmaxSubtractsTheRowMaximumAndExponentiatesOnce) {
  const std::string& code = find_case(reductions(), "softmax").source.code;
  size_t first = code.find("- row_max)");
  ASSERT_NE(first, std::string::npos) << code;
  EXPECT_EQ(code.find("- row_max)", first + 1), std::string::npos) << code;
  EXPECT_NE(code.find("float sum"), std::string::npos) << code;
  // The kernel's own code, after the prelude and helpers (which have double overloads).
  EXPECT_EQ(code.find("double", code.find("struct Buffers")), std::string::npos) << code;
}

TEST(CpuAnchorKernels, BatchNormPassesTheMovingStatisticsThrough) {
  const PreparedCase& p = find_case(reductions(), "batch_norm");
  ASSERT_EQ(p.source.outputs.size(), 3u);
  std::vector<NDArray> out = run_kernel(*reductions().library, p.source, p.kernel_inputs, TestServices(1));
  EXPECT_TRUE(out[1].bitwise_equal(p.inputs.at("m")));
  EXPECT_TRUE(out[2].bitwise_equal(p.inputs.at("v")));
}

}  // namespace cpu_anchor_kernels_test
}  // namespace switchyard::testing
