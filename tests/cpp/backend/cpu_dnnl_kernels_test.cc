// oneDNN anchor kernels: the bias through the primitive's bias argument, the
// residual add as a sum post-op, weights in the layout oneDNN chooses
// (reordered once when constant, per call when computed), convolution
// activations reordered to and from oneDNN's blocked layouts, and one
// primitive per thread count, each compared with the reference interpreter.
#include <gtest/gtest.h>

#include <thread>

#include "interp/evaluate.h"
#include "kernel_cases.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard::testing {
namespace cpu_dnnl_kernels_test {

std::string main_of(const std::string& params, const std::string& body) {
  return "def @main(" + params + ") {\n" + body + "\n}\n";
}

std::vector<KernelCase> dnnl_cases() {
  const std::string image = "%x: Tensor[(2, 4, 9, 9), float32]";
  const std::string out = "Tensor[(2, 6, 9, 9), float32]";
  return {
      {"conv_bias_relu",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %b: Tensor[(6), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  %1 = nn.bias_add(%0, %b);\n  nn.relu(%1)"),
       -2, 2, 0, 0, 1e-3, {"w", "b"}},
      {"conv_bias_computed_weights",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %b: Tensor[(6), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  nn.bias_add(%0, %b)"),
       -2, 2, 0, 0, 1e-3},
      {"conv_bias_residual_relu",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %b: Tensor[(6), float32], %r: " + out,
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  %1 = nn.bias_add(%0, %b);\n"
               "  %2 = add(%1, %r);\n  nn.relu(%2)"),
       -2, 2, 0, 0, 1e-3, {"w", "b"}},
      {"conv_residual_left",
       main_of(image + ", %w: Tensor[(6, 4, 1, 1), float32], %r: Tensor[(2, 6, 9, 9), float32]",
               "  %0 = nn.conv2d(%x, %w);\n  %1 = add(%r, %0);\n  nn.relu(%1)"),
       -2, 2, 0, 0, 1e-3, {"w"}},
      {"depthwise_bias_clip",
       main_of("%x: Tensor[(1, 8, 10, 10), float32], %w: Tensor[(8, 1, 3, 3), float32], %b: Tensor[(8), float32]",
               "  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=8);\n"
               "  %1 = nn.bias_add(%0, %b);\n  clip(%1, a_min=0f, a_max=6f)"),
       -2, 2, 0, 0, 1e-3, {"w", "b"}},
      {"grouped_channel_vector_bias",
       main_of(image + ", %w: Tensor[(6, 2, 3, 3), float32], %b: Tensor[(6, 1, 1), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1], groups=2);\n  %1 = add(%b, %0);\n  nn.relu(%1)"),
       -2, 2, 0, 0, 1e-3, {"w", "b"}},
      {"conv_bias_unmapped_epilogue",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %b: Tensor[(6), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  %1 = nn.bias_add(%0, %b);\n  erf(%1)"),
       -2, 2, 0, 0, 1e-3, {"w", "b"}},
      {"conv_scale_operand",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %s: Tensor[(6, 1, 1), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  multiply(%0, %s)"),
       -2, 2, 0, 0, 1e-3, {"w"}},
      {"dense_bias_add_tanh",
       main_of("%x: Tensor[(2, 3, 8), float32], %w: Tensor[(16, 8), float32], %b: Tensor[(16), float32]",
               "  %0 = nn.dense(%x, %w);\n  %1 = nn.bias_add(%0, %b, axis=-1);\n  tanh(%1)"),
       -2, 2, 0, 0, 1e-4, {"w", "b"}},
      {"dense_bias_residual",
       main_of("%x: Tensor[(3, 8), float32], %w: Tensor[(16, 8), float32], %b: Tensor[(16), float32], "
               "%r: Tensor[(3, 16), float32]",
               "  %0 = nn.dense(%x, %w);\n  %1 = add(%0, %b);\n  add(%1, %r)"),
       -2, 2, 0, 0, 1e-4, {"w", "b"}},
      // One value as both operands (a Gram matrix, self-attention scores):
      // the kernel has one input, which the primitive reads twice.
      {"dense_gram_matrix", main_of("%x: Tensor[(5, 8), float32]", "  nn.dense(%x, %x)"), -2, 2, 0, 0, 1e-5},
      {"dense_gram_weights", main_of("%w: Tensor[(6, 8), float32]", "  nn.relu(nn.dense(%w, %w))"), -2, 2, 0, 0,
       1e-5, {"w"}},
      {"matmul_bias",
       main_of("%a: Tensor[(3, 7), float32], %b: Tensor[(7, 5), float32], %c: Tensor[(5), float32]",
               "  %0 = matmul(%a, %b);\n  add(%0, %c)")},
      // A batch of rows times one weight matrix: one matrix product.
      {"matmul_rows_bias_residual",
       main_of("%a: Tensor[(4, 3, 16), float32], %b: Tensor[(16, 8), float32], %c: Tensor[(8), float32], "
               "%r: Tensor[(4, 3, 8), float32]",
               "  %0 = matmul(%a, %b);\n  add(add(%0, %c), %r)"),
       -2, 2, 0, 0, 1e-5, {"b", "c"}},
      // Exact GELU as PyTorch exports it, and with the other association.
      {"matmul_bias_gelu",
       main_of("%a: Tensor[(6, 16), float32], %b: Tensor[(16, 24), float32], %c: Tensor[(24), float32]",
               "  %0 = add(%c, matmul(%a, %b));\n  %1 = erf(divide(%0, 1.4142135f));\n"
               "  multiply(multiply(%0, add(%1, 1f)), 0.5f)"),
       -2, 2, 0, 0, 1e-5, {"b", "c"}},
      {"dense_gelu_scaled_first",
       main_of("%x: Tensor[(5, 8), float32], %w: Tensor[(12, 8), float32]",
               "  %0 = nn.dense(%x, %w);\n  %1 = add(1f, erf(multiply(0.70710677f, %0)));\n"
               "  multiply(%1, multiply(0.5f, %0))"),
       -2, 2, 0, 0, 1e-5, {"w"}},
      // HardSigmoid as ONNX imports it: a multiply and an add become one
      // linear post-op (oneDNN computes two linear post-ops with the first
      // one's parameters), then the clip.
      {"conv_hard_sigmoid",
       main_of("%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(32, 16, 3, 3), float32], %b: Tensor[(32), float32]",
               "  %0 = nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b);\n"
               "  clip(add(multiply(%0, 0.25f), 0.5f), a_min=0f, a_max=1f)"),
       -2, 2, 0, 0, 1e-4, {"w", "b"}},
      // A second linear step after the clip cannot be a post-op beside the
      // first: the post-ops stop there and a loop adds the 0.5.
      {"conv_linear_clip_linear",
       main_of("%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(32, 16, 1, 1), float32]",
               "  %0 = multiply(nn.conv2d(%x, %w), 3f);\n  add(clip(%0, a_min=-1f, a_max=1f), 0.5f)"),
       -2, 2, 0, 0, 1e-4, {"w"}},
      // HardSwish reads its argument twice: the bias and the relu before it
      // are the primitive's, the rest a loop over the relu's result.
      {"conv_bias_relu_hard_swish",
       main_of("%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(32, 16, 3, 3), float32], %b: Tensor[(32), float32]",
               "  %0 = nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b));\n"
               "  multiply(%0, clip(add(divide(%0, 6f), 0.5f), a_min=0f, a_max=1f))"),
       -2, 2, 0, 0, 1e-4, {"w", "b"}},
      // oneDNN's pooling takes a sum post-op and ignores it (found by the
      // fusion fuzzer): the residual is the loop's.
      {"global_avg_pool_residual",
       main_of("%x: Tensor[(1, 8, 14, 14), float32], %r: Tensor[(1, 8, 1, 1), float32]",
               "  add(nn.global_avg_pool2d(%x), %r)")},
      {"conv_spatial_scale",
       main_of(image + ", %w: Tensor[(6, 4, 3, 3), float32], %s: Tensor[(1, 1, 9, 9), float32]",
               "  %0 = nn.conv2d(%x, %w, padding=[1, 1]);\n  multiply(%0, %s)"),
       -2, 2, 0, 0, 1e-3, {"w"}},
      // A diamond that is not a GELU (the erf's scale is wrong): fused, as a loop.
      {"dense_almost_gelu",
       main_of("%x: Tensor[(5, 8), float32], %w: Tensor[(12, 8), float32]",
               "  %0 = nn.dense(%x, %w);\n  %1 = add(1f, erf(multiply(0.5f, %0)));\n"
               "  multiply(%1, multiply(0.5f, %0))"),
       -2, 2, 0, 0, 1e-5, {"w"}},
  };
}

const CaseBatch& cases() {
  static const CaseBatch built = build_cases(dnnl_cases(), "dnnl");
  return built;
}

const PreparedCase& find_case(const std::string& name) {
  for (const PreparedCase& p : cases().cases)
    if (p.spec.name == name) return p;
  throw std::runtime_error("no case " + name);
}

bool has(const std::string& code, const std::string& text) { return code.find(text) != std::string::npos; }

TEST(CpuDnnlKernels, MatchTheInterpreterOnOneAndTwoThreads) {
  // Each thread count makes its own primitive; both must agree.
  for (int threads : {1, 2, 1}) {
    TestServices services(threads);
    for (const PreparedCase& p : cases().cases) expect_matches_interpreter(cases(), p, services);
  }
}

TEST(CpuDnnlKernels, NewWeightsAtAnotherAddressGiveTheirOwnResult) {
  TestServices services(2);
  for (const char* name : {"conv_bias_relu", "depthwise_bias_clip", "dense_bias_add_tanh"}) {
    const PreparedCase& first = find_case(name);
    PreparedCase second = prepare_case(first.spec, 2);  // new arrays: new addresses, other values
    ASSERT_TRUE(second.source.primitive && first.source.primitive);
    ASSERT_EQ(*second.source.primitive, *first.source.primitive);
    for (int run = 0; run < 2; ++run) {
      expect_matches_interpreter(cases(), first, services);
      expect_matches_interpreter(cases(), second, services);
    }
  }
}

// Runs overlap: several threads run primitives of one spec at once.
TEST(CpuDnnlKernels, OverlappingRunsAgree) {
  PreparedCase fresh = prepare_case(find_case("conv_bias_residual_relu").spec, 3);  // weights not yet reordered
  std::vector<NDArray> expected = flatten_value(evaluate(fresh.module, fresh.inputs));
  std::vector<std::string> failures(6);
  std::vector<std::thread> runs;
  for (size_t t = 0; t < failures.size(); ++t)
    runs.emplace_back([&, t] {
      TestServices services(int(t % 2) + 1);
      for (int run = 0; run < 3 && failures[t].empty(); ++run)
        failures[t] = compare_arrays(run_kernel(*cases().library, fresh.source, fresh.kernel_inputs, services)[0],
                                     expected[0], fresh.spec.tolerance);
    });
  for (std::thread& run : runs) run.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
}

const PrimitiveSpec& spec_of(const char* name) {
  const PreparedCase& p = find_case(name);
  if (!p.source.primitive) throw std::runtime_error(std::string(name) + " runs no oneDNN primitive");
  return *p.source.primitive;
}

bool has_post_op(const PrimitiveSpec& spec, PrimitivePostOp::Kind kind, const std::string& algorithm = "") {
  for (const PrimitivePostOp& p : spec.post_ops)
    if (p.kind == kind && (algorithm.empty() || p.algorithm == algorithm)) return true;
  return false;
}

TEST(CpuDnnlKernels, TheBiasIsThePrimitivesOwnArgument) {
  for (const char* name : {"conv_bias_relu", "conv_bias_residual_relu", "depthwise_bias_clip",
                           "grouped_channel_vector_bias", "conv_bias_unmapped_epilogue", "dense_bias_add_tanh",
                           "dense_bias_residual", "matmul_bias", "conv_bias_computed_weights"}) {
    const PrimitiveSpec& spec = spec_of(name);
    EXPECT_FALSE(spec.bias.empty()) << name;
    EXPECT_GE(spec.bias_input, 0) << name;
    EXPECT_FALSE(has_post_op(spec, PrimitivePostOp::Kind::kBinary)) << name;
  }
  const PrimitiveSpec& scaled = spec_of("conv_scale_operand");
  EXPECT_TRUE(scaled.bias.empty());
  EXPECT_TRUE(has_post_op(scaled, PrimitivePostOp::Kind::kBinary, "binary_mul"));
}

TEST(CpuDnnlKernels, TheResidualAddIsASumPostOp) {
  for (const char* name : {"conv_bias_residual_relu", "conv_residual_left", "dense_bias_residual"})
    EXPECT_TRUE(has_post_op(spec_of(name), PrimitivePostOp::Kind::kSum)) << name;
}

TEST(CpuDnnlKernels, AFusedEpilogueLeavesNoCodeToCompile) {
  for (const char* name : {"conv_bias_relu", "conv_bias_residual_relu", "dense_bias_add_tanh"}) {
    const PreparedCase& p = find_case(name);
    EXPECT_TRUE(p.source.library_only()) << name << "\n" << p.source.code;
  }
}

TEST(CpuDnnlKernels, OneDnnChoosesTheLayoutOfConstantWeightsAndOfConvolutions) {
  EXPECT_TRUE(spec_of("conv_bias_relu").any_weights_layout);
  EXPECT_TRUE(spec_of("conv_bias_relu").any_activation_layout);
  EXPECT_TRUE(spec_of("conv_bias_computed_weights").any_weights_layout);
  EXPECT_TRUE(spec_of("dense_bias_add_tanh").any_weights_layout);
  // A product's computed right operand stays plain: a reorder every call would not pay.
  EXPECT_FALSE(spec_of("matmul_bias").any_weights_layout);
}

TEST(CpuDnnlKernels, RowsTimesSharedWeightsAreOneMatrixProduct) {
  const PrimitiveSpec& spec = spec_of("matmul_rows_bias_residual");
  EXPECT_EQ(spec.src.dims, (std::vector<int64_t>{12, 16}));
  EXPECT_EQ(spec.weights.dims, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(spec.dst.dims, (std::vector<int64_t>{12, 8}));
  EXPECT_FALSE(spec.bias.empty());
  ASSERT_EQ(spec.post_ops.size(), 1u);
  EXPECT_EQ(spec.post_ops[0].kind, PrimitivePostOp::Kind::kSum);
}

// After a product an exact GELU is a post-op only where oneDNN's brgemm
// applies it inside its kernel; its GEMM applies it slowly, in a pass after,
// and the GELU is then the loop after the primitive. The bias stays the
// primitive's either way.
TEST(CpuDnnlKernels, AnExactGeluAfterAProductIsAPostOpOnlyWhereBrgemmRunsIt) {
  for (const char* name : {"matmul_bias_gelu", "dense_gelu_scaled_first"}) {
    const PreparedCase& p = find_case(name);
    ASSERT_TRUE(p.source.primitive) << name;
    PrimitiveSpec with_gelu = *p.source.primitive;
    bool gelu_post_op = false;
    for (const PrimitivePostOp& post : with_gelu.post_ops) gelu_post_op |= post.algorithm == "eltwise_gelu_erf";
    if (!gelu_post_op) with_gelu.post_ops.push_back({PrimitivePostOp::Kind::kEltwise, "eltwise_gelu_erf"});
    std::string implementation = dnnl_implementation(with_gelu);
    bool brgemm = implementation.rfind("brg", 0) == 0;
    EXPECT_EQ(gelu_post_op, brgemm) << name << " on " << implementation;
    EXPECT_EQ(p.source.library_only(), brgemm) << name;
    if (!brgemm) {
      EXPECT_TRUE(has(p.source.code, "services->run_primitive(")) << p.source.code;
      EXPECT_TRUE(has(p.source.code, "sy_erf(")) << p.source.code;
    }
  }
  EXPECT_FALSE(spec_of("matmul_bias_gelu").bias.empty());
  EXPECT_FALSE(find_case("dense_almost_gelu").source.library_only());
}

TEST(CpuDnnlKernels, AnUnmappedEpilogueLoopsOverTheBiasedResult) {
  const PreparedCase& p = find_case("conv_bias_unmapped_epilogue");
  EXPECT_FALSE(p.source.library_only());
  EXPECT_TRUE(has(p.source.code, "services->run_primitive(")) << p.source.code;
  EXPECT_TRUE(has(p.source.code, "void epilogue(")) << p.source.code;
  EXPECT_TRUE(has(p.source.code, "sy_erf(") || has(p.source.code, "std::erf(")) << p.source.code;
  EXPECT_FALSE(has(p.source.code, "dnnl")) << p.source.code;
}

std::vector<PrimitivePostOp> eltwise_posts(std::initializer_list<std::tuple<const char*, float, float>> posts) {
  std::vector<PrimitivePostOp> out;
  for (auto [algorithm, alpha, beta] : posts) {
    PrimitivePostOp p;
    p.algorithm = algorithm;
    p.alpha = alpha;
    p.beta = beta;
    out.push_back(p);
  }
  return out;
}

TEST(CpuDnnlKernels, AdjacentLinearStepsAreOnePostOp) {
  const PreparedCase& p = find_case("conv_hard_sigmoid");
  EXPECT_TRUE(p.source.library_only()) << p.source.code;
  EXPECT_EQ(spec_of("conv_hard_sigmoid").post_ops, eltwise_posts({{"eltwise_linear", 0.25f, 0.5f}, {"eltwise_clip", 0, 1}}));
}

TEST(CpuDnnlKernels, PostOpsStopBeforeASecondSetOfParametersForOneAlgorithm) {
  const PreparedCase& p = find_case("conv_linear_clip_linear");
  EXPECT_EQ(spec_of("conv_linear_clip_linear").post_ops,
            eltwise_posts({{"eltwise_linear", 3, 0}, {"eltwise_clip", -1, 1}}));
  EXPECT_FALSE(p.source.library_only());
  EXPECT_TRUE(has(p.source.code, "void epilogue(")) << p.source.code;
  // oneDNN itself is never given such a chain: made directly, it is refused.
  PrimitiveSpec repeated = spec_of("conv_linear_clip_linear");
  repeated.post_ops.push_back(eltwise_posts({{"eltwise_linear", 1, 0.5f}})[0]);
  EXPECT_FALSE(dnnl_makes(repeated));
  repeated.post_ops.back().beta = 0;
  repeated.post_ops.back().alpha = 3;
  EXPECT_TRUE(dnnl_makes(repeated));  // the same parameters again are computed right
}

// A pool's epilogue runs as a loop after it (the runtime repairs the pool's
// result first, targets/cpu/runtime/dnnl_pooling_repair.h); oneDNN's pooling would in
// any case ignore a sum post-op, so the runtime refuses one.
TEST(CpuDnnlKernels, APoolsResidualIsAddedByTheLoopAfterIt) {
  const PreparedCase& p = find_case("global_avg_pool_residual");
  PrimitiveSpec spec = spec_of("global_avg_pool_residual");
  EXPECT_TRUE(spec.post_ops.empty());
  EXPECT_TRUE(has(p.source.code, "void epilogue(")) << p.source.code;
  PrimitivePostOp sum;
  sum.kind = PrimitivePostOp::Kind::kSum;
  sum.input = 1;
  sum.operand = spec.dst;
  spec.post_ops.push_back(sum);
  EXPECT_FALSE(dnnl_makes(spec));
}

TEST(CpuDnnlKernels, AnEpilogueReadingAValueTwiceKeepsThePostOpsBeforeIt) {
  const PreparedCase& p = find_case("conv_bias_relu_hard_swish");
  const PrimitiveSpec& spec = spec_of("conv_bias_relu_hard_swish");
  EXPECT_FALSE(spec.bias.empty());
  EXPECT_EQ(spec.post_ops, eltwise_posts({{"eltwise_relu", 0, 0}}));
  EXPECT_TRUE(has(p.source.code, "void epilogue(")) << p.source.code;
}

}  // namespace cpu_dnnl_kernels_test
}  // namespace switchyard::testing
