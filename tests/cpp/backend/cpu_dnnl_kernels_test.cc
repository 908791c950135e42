// oneDNN anchor kernels: the bias through the primitive's bias argument, the
// residual add as a sum post-op, weights in the layout oneDNN chooses
// (reordered once when constant, per call when computed), convolution
// activations reordered to and from oneDNN's blocked layouts, and one
// primitive per thread count, each compared with the reference interpreter.
#include <gtest/gtest.h>

#include <thread>

#include "interp/evaluate.h"
#include "kernel_cases.h"

namespace switchyard::testing {
namespace {

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
      {"matmul_bias",
       main_of("%a: Tensor[(3, 7), float32], %b: Tensor[(7, 5), float32], %c: Tensor[(5), float32]",
               "  %0 = matmul(%a, %b);\n  add(%0, %c)")},
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

TEST(CpuDnnlKernels, NewConstantWeightsAtAnotherAddressAreReorderedAgain) {
  TestServices services(2);
  for (const char* name : {"conv_bias_relu", "depthwise_bias_clip", "dense_bias_add_tanh"}) {
    const PreparedCase& first = find_case(name);
    PreparedCase second = prepare_case(first.spec, 2);  // new arrays: new addresses, other values
    ASSERT_EQ(second.source.code, first.source.code);
    for (int run = 0; run < 2; ++run) {
      expect_matches_interpreter(cases(), first, services);
      expect_matches_interpreter(cases(), second, services);
    }
  }
}

// Runs overlap: the first calls of several threads at once make each thread
// count's primitive and reorder the weights exactly once, and later calls
// share them.
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

TEST(CpuDnnlKernels, TheBiasIsThePrimitivesOwnArgument) {
  for (const char* name : {"conv_bias_relu", "conv_bias_residual_relu", "depthwise_bias_clip",
                           "grouped_channel_vector_bias", "conv_bias_unmapped_epilogue", "dense_bias_add_tanh",
                           "dense_bias_residual", "matmul_bias", "conv_bias_computed_weights"}) {
    const std::string& code = find_case(name).source.code;
    EXPECT_TRUE(has(code, "{DNNL_ARG_BIAS, ")) << name << "\n" << code;
    EXPECT_FALSE(has(code, "append_binary")) << name << "\n" << code;
  }
  const std::string& scaled = find_case("conv_scale_operand").source.code;
  EXPECT_FALSE(has(scaled, "DNNL_ARG_BIAS")) << scaled;
  EXPECT_TRUE(has(scaled, "append_binary(dnnl::algorithm::binary_mul")) << scaled;
}

TEST(CpuDnnlKernels, TheResidualAddIsASumOverACopyInTheDestination) {
  for (const char* name : {"conv_bias_residual_relu", "conv_residual_left", "dense_bias_residual"}) {
    const std::string& code = find_case(name).source.code;
    EXPECT_TRUE(has(code, "epilogue.append_sum(1.0f);")) << name << "\n" << code;
    EXPECT_TRUE(has(code, "std::memcpy(buffers.out0, buffers.")) << name << "\n" << code;
  }
}

TEST(CpuDnnlKernels, ConstantWeightsAreReorderedOnceComputedOnesEveryCall) {
  EXPECT_TRUE(has(find_case("conv_bias_relu").source.code, "weights_for(p, v, stream, buffers.in1_w, true)"));
  EXPECT_TRUE(
      has(find_case("conv_bias_computed_weights").source.code, "weights_for(p, v, stream, buffers.in1_w, false)"));
  EXPECT_TRUE(has(find_case("dense_bias_add_tanh").source.code, "format_tag::any"));
  // A product's computed right operand stays plain: a reorder every call would not pay.
  EXPECT_FALSE(has(find_case("matmul_bias").source.code, "format_tag::any"));
}

TEST(CpuDnnlKernels, ConvolutionsReorderTheirActivationsIntoTheLayoutOneDnnChose) {
  const std::string& code = find_case("conv_bias_residual_relu").source.code;
  EXPECT_TRUE(has(code, "v.to_src.execute(stream, src, blocked);")) << code;
  // The residual goes into the blocked destination through a reorder, not a copy.
  EXPECT_TRUE(has(code, "v.to_dst.execute(stream, residual, dst);")) << code;
  EXPECT_TRUE(has(code, "v.from_dst.execute(stream, dst, output);")) << code;
}

TEST(CpuDnnlKernels, AnUnmappedEpilogueLoopsOverTheBiasedResult) {
  const std::string& code = find_case("conv_bias_unmapped_epilogue").source.code;
  EXPECT_TRUE(has(code, "void epilogue(")) << code;
  EXPECT_TRUE(has(code, "sy_erf(") || has(code, "std::erf(")) << code;
}

TEST(CpuDnnlKernels, OneDnnRunsOnTheDevicesThreadShare) {
  const std::string& code = find_case("conv_bias_relu").source.code;
  EXPECT_TRUE(has(code, "omp_set_num_threads(threads);")) << code;
  EXPECT_TRUE(has(code, "p.variant(threads)")) << code;
}

}  // namespace
}  // namespace switchyard::testing
