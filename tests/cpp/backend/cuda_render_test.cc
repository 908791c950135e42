// The CUDA renderer of the kernel IR: what it prints for the kernels of
// real fused groups (element-wise, reductions, normalisations), the launch
// shapes it chooses, and NVRTC compiling each to a cubin for sm_90. Nothing
// here runs on a GPU (scripts/gpu-check.sh does); the NVRTC cases skip,
// saying why, in a build without a CUDA toolkit, and that build's own error
// is checked instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "aot_test_util.h"
#include "codegen/expression_printer.h"
#include "codegen/kernel.h"
#include "ir/virtual_device.h"
#include "op/registry.h"
#include "runtime/runtime_error.h"
#include "support/error.h"
#include "targets/cpu/compiler/cpu_render.h"
#include "targets/cuda/compiler/codegen_cuda.h"
#include "targets/cuda/compiler/cuda_compile.h"
#include "targets/cuda/compiler/cuda_render.h"
#include "targets/cuda/runtime/cuda_driver.h"
#include "text/parser.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type.h"

namespace switchyard::testing {
namespace cuda_render_test {

namespace ki = kernel_ir;

// The first fused group of `text`'s main lowered as for a cuda device.
KernelSource first_group_source(const std::string& text) {
  IRModule fused = FuseOps()(infer_type(parse_module(text, "cuda.sy")));
  Function primitive = downcast<FunctionNode>(as<CallNode>(fused.lookup("main")->body)->op);
  return lower_kernel_source(primitive, "k", {}, cuda_libraries());
}

// Its kernel IR.
ki::Kernel first_group_ir(const std::string& text) {
  KernelSource source = first_group_source(text);
  EXPECT_TRUE(source.kernel_ir) << text;
  return source.kernel_ir ? *source.kernel_ir : ki::Kernel();
}

void expect_code_holds(const std::string& code, const std::vector<std::string>& expected) {
  for (const std::string& text : expected) EXPECT_NE(code.find(text), std::string::npos) << text << "\n" << code;
}

const char* kBroadcastAddRelu =
    "def @main(%x: Tensor[(64, 300), float32], %y: Tensor[(300), float32]) {\n"
    "  %0 = add(%x, %y);\n  nn.relu(%0)\n}\n";
const char* kRowSum = "def @main(%x: Tensor[(6, 300), float32]) {\n  sum(%x, axis=[1])\n}\n";
const char* kSoftmax = "def @main(%x: Tensor[(6, 300), float32]) {\n  nn.softmax(%x, axis=-1)\n}\n";

TEST(CudaRender, AnElementwiseGroupRunsAWarpPerRowItsLanesAcrossTheColumns) {
  ki::Kernel k = first_group_ir(kBroadcastAddRelu);
  CudaKernel cuda = render_cuda_kernel(k, "fused_add_relu");
  ASSERT_EQ(cuda.launches.size(), 1u);
  const CudaLaunch& launch = cuda.launches[0];
  EXPECT_EQ(launch.function, "fused_add_relu_compute");
  EXPECT_EQ(launch.items, 64);
  EXPECT_EQ(launch.threads_per_item, 32);
  EXPECT_EQ(launch.block, 256);
  EXPECT_EQ(launch.grid, 64 * 32 / 256);
  EXPECT_FALSE(cuda.may_fault);
  expect_code_holds(cuda.code, {"extern \"C\" __global__ void __launch_bounds__(256) fused_add_relu_compute(const Buffers buffers)",
                                "const float* __restrict__ in0_x = buffers.in0_x;",
                                "for (int64_t i1 = 0 + warp_lane; i1 < 300; i1 += 32) {",
                                "out0[row * 300 + i1] = relu_", "__syncwarp();", "// add at cuda.sy:2:8"});
  // Stores inside the lanes' loop are each lane's own: no lane-0 guard there.
  EXPECT_EQ(cuda.code.find("if (warp_lane == 0) out0[row"), std::string::npos) << cuda.code;
}

// A parallel loop that is one simd loop over its chunk runs a thread per
// `vector_width` elements.
TEST(CudaRender, AChunkLoopRunsAThreadPerVectorOfElements) {
  auto kernel = [](int width) {
    ki::Expr i = ki::var("i");
    ki::Kernel k;
    k.buffers = {{"in0_x", DType::kFloat32, ki::BufferRole::kInput, 0, true, {1000}, "", "%x"},
                 {"out0", DType::kFloat32, ki::BufferRole::kOutput, 0, false, {1000}, "", ""}};
    ScalarCall relu{as<OpNode>(op_get("nn.relu")), Attrs(), {DType::kFloat32}, DType::kFloat32, Span()};
    k.body = {ki::parallel(
        "compute", 1000, 1024,
        {ki::for_loop("i", ki::var("begin"), ki::var("end"), ki::LoopKind::kSimd,
                      {ki::store("out0", i, ki::call(relu, {ki::load("in0_x", DType::kFloat32, i)}))}, width)},
        "relu")};
    return k;
  };
  CudaKernel one = render_cuda_kernel(kernel(0), "relu");
  ASSERT_EQ(one.launches.size(), 1u);
  EXPECT_EQ(one.launches[0].items, 1000);
  EXPECT_EQ(one.launches[0].threads_per_item, 1);
  EXPECT_EQ(one.launches[0].grid, 4);
  expect_code_holds(one.code, {"const int64_t i = work_item;", "out0[i] = (in0_x[i]) > 0.0f ? (in0_x[i]) : 0.0f;"});
  CudaKernel four = render_cuda_kernel(kernel(4), "relu");
  EXPECT_EQ(four.launches[0].items, 250);
  expect_code_holds(four.code, {"const int64_t begin = work_item * 4;",
                                "const int64_t end = std::min<int64_t>(begin + 4, 1000);", "#pragma unroll"});
}

TEST(CudaRender, AReductionCombinesTheLanesPartialsByWarpShuffles) {
  CudaKernel cuda = render_cuda_kernel(first_group_ir(kRowSum), "row_sum");
  ASSERT_EQ(cuda.launches.size(), 1u);
  EXPECT_EQ(cuda.launches[0].items, 6);
  EXPECT_EQ(cuda.launches[0].threads_per_item, 32);
  expect_code_holds(cuda.code, {"double acc = 0.0;", "if (warp_lane != 0) acc = 0;",
                                "for (int64_t r1 = 0 + warp_lane; r1 < 300; r1 += 32) {",
                                "for (int offset = 16; offset > 0; offset /= 2) {",
                                "acc += __shfl_xor_sync(0xffffffffu, acc, offset);",
                                // One lane stores the row's sum, which every lane holds.
                                "if (warp_lane == 0) out0[o] = sum_"});
}

// A reduction over a middle axis keeps a tile of the kept columns' sums in
// a local array, whose elements one thread must fill and read: a thread
// per tile, its loops serial, every store its own.
TEST(CudaRender, AReductionKeepingALocalArrayRunsAThreadPerIteration) {
  CudaKernel cuda = render_cuda_kernel(
      first_group_ir("def @main(%x: Tensor[(6, 5, 300), float32]) {\n  %0 = exp(%x);\n  %1 = sum(%0, axis=[1]);\n"
                     "  nn.relu(%1)\n}\n"),
      "tile_sum");
  ASSERT_EQ(cuda.launches.size(), 1u);
  EXPECT_EQ(cuda.launches[0].threads_per_item, 1);
  EXPECT_EQ(cuda.launches[0].items, 12);
  expect_code_holds(cuda.code, {"double acc[256];", "for (int64_t j = 0; j < width; ++j) {",
                                "(it keeps local arrays)", "out0[outer * 300 + first + j] = relu_"});
  EXPECT_EQ(cuda.code.find("warp_lane"), std::string::npos) << cuda.code;
}

TEST(CudaRender, SoftmaxTakesTheRowMaximumAndSumAcrossTheLanes) {
  CudaKernel cuda = render_cuda_kernel(first_group_ir(kSoftmax), "softmax");
  expect_code_holds(cuda.code, {"const auto other = __shfl_xor_sync(0xffffffffu, row_max, offset);",
                                "row_max = other > row_max ? other : row_max;",
                                "sum += __shfl_xor_sync(0xffffffffu, sum, offset);", "expf("});
}

// The operators' meanings come from the one scalar table; CUDA spells its
// math functions, not the CPU's vectorisable sy_ helpers.
TEST(CudaRender, OperatorsAreSpelledWithCudasMathLibrary) {
  CudaKernel cuda = render_cuda_kernel(
      first_group_ir("def @main(%x: Tensor[(4, 40), float32]) {\n  %0 = erf(%x);\n  %1 = tanh(%0);\n"
                     "  %2 = sigmoid(%1);\n  %3 = round(%2);\n  sqrt(%3)\n}\n"),
      "math");
  expect_code_holds(cuda.code, {"erff(", "tanhf(", "expf(", "rintf(", "sqrtf("});
  EXPECT_EQ(cuda.code.find("sy_exp"), std::string::npos) << cuda.code;
  EXPECT_EQ(cuda.code.find("sy_erf"), std::string::npos) << cuda.code;
  // The C library's functions by their float names: sinf, acoshf.
  CudaKernel trigonometric = render_cuda_kernel(
      first_group_ir("def @main(%x: Tensor[(4, 40), float32]) {\n  %0 = sin(%x);\n  acosh(%0)\n}\n"), "trig");
  expect_code_holds(trigonometric.code, {"sinf(", "acoshf("});
  EXPECT_EQ(trigonometric.code.find("sy_sin"), std::string::npos) << trigonometric.code;
  // Integer division faults as on the CPU, through the kernel's fault word.
  CudaKernel divide = render_cuda_kernel(
      first_group_ir("def @main(%x: Tensor[(4, 40), int32], %y: Tensor[(4, 40), int32]) {\n  divide(%x, %y)\n}\n"),
      "divide");
  EXPECT_TRUE(divide.may_fault);
  expect_code_holds(divide.code, {"int* faults;", "sy_divide_int(", "buffers.faults", "atomicOr(word, bits)"});
}

// A call the IR computes in double (batch_norm's 1 / sqrt(variance +
// epsilon), as the reference does) is spelled in double, not as sqrtf.
TEST(CudaRender, ACallInDoubleIsSpelledInDouble) {
  ScalarCall sqrt_call{as<OpNode>(op_get("sqrt")), Attrs(), {DType::kFloat32}, DType::kFloat32, Span()};
  ki::Expr held = ki::in_accumulator(ki::var("variance", DType::kFloat32));
  std::set<CpuHelper> helpers;
  EXPECT_EQ(render_kernel_expr(ki::call(sqrt_call, {held}, ki::Precision::kAccumulator), kCudaScalarSpelling, helpers),
            "sqrt(variance)");
  EXPECT_EQ(render_kernel_expr(ki::call(sqrt_call, {ki::var("v", DType::kFloat32)}), kCudaScalarSpelling, helpers),
            "sqrtf(v)");
}

// A generated float32 convolution's fused multiply-add is CUDA's fmaf (one
// rounding), the CPU's __builtin_fmaf; a float16 or double operand is refused.
TEST(CudaRender, AFusedMultiplyAddIsSpelledForEachTarget) {
  ki::Expr x = ki::var("x", DType::kFloat32), w = ki::var("w", DType::kFloat32), acc = ki::var("acc", DType::kFloat32);
  std::set<CpuHelper> helpers;
  EXPECT_EQ(render_kernel_expr(ki::fused_multiply_add(x, w, acc), kCudaScalarSpelling, helpers), "fmaf(x, w, acc)");
  EXPECT_EQ(render_kernel_expr(ki::fused_multiply_add(x, w, acc), kCpuScalarSpelling, helpers),
            "__builtin_fmaf(x, w, acc)");
  EXPECT_THROW(ki::fused_multiply_add(ki::var("h", DType::kFloat16), w, acc), std::logic_error);
  EXPECT_THROW(ki::fused_multiply_add(x, w, ki::in_accumulator(acc)), std::logic_error);
}

// An anchor cuBLASLt runs is its primitive (the bias fused), and the
// epilogue it does not fuse (tanh) is loops after it; the entry queues the
// primitive first.
TEST(CudaRender, AnAnchorTheLibrariesRunIsTheirPrimitiveThenTheEpilogueLoops) {
  KernelSource source = first_group_source(
      "def @main(%x: Tensor[(4, 32), float32], %w: Tensor[(16, 32), float32], %b: Tensor[(16), float32]) {\n"
      "  tanh(nn.bias_add(nn.dense(%x, %w), %b))\n}\n");
  ASSERT_TRUE(source.primitive);
  EXPECT_EQ(source.primitive->bias_input, 2);
  EXPECT_TRUE(source.primitive->post_ops.empty());
  ASSERT_TRUE(source.kernel_ir);
  ASSERT_EQ(source.kernel_ir->body.size(), 2u);
  EXPECT_EQ(source.kernel_ir->body[0]->kind, ki::StmtKind::kRunPrimitive);
  CudaKernel cuda = render_cuda_kernel(*source.kernel_ir, "k");
  ASSERT_EQ(cuda.launches.size(), 1u);
  expect_code_holds(cuda.code, {"runs first, queued by the entry", "tanhf("});
  if (cuda_toolkit_available()) {
    EXPECT_NO_THROW(compile_cuda(cuda.code, "k", "sm_90"));
  }
  // What cuBLASLt fuses whole (bias and ReLU) has no loops at all.
  KernelSource fused = first_group_source(
      "def @main(%x: Tensor[(4, 32), float32], %w: Tensor[(16, 32), float32], %b: Tensor[(16), float32]) {\n"
      "  nn.relu(nn.bias_add(nn.dense(%x, %w), %b))\n}\n");
  EXPECT_TRUE(fused.primitive && !fused.kernel_ir);
  // An epilogue changing the dtype would keep the product in scratch, which
  // the CUDA renderer has not: that anchor is loops.
  KernelSource cast = first_group_source(
      "def @main(%x: Tensor[(4, 32), float32], %w: Tensor[(16, 32), float32]) {\n"
      "  cast(nn.dense(%x, %w), dtype=\"float16\")\n}\n");
  EXPECT_FALSE(cast.primitive);
  ASSERT_TRUE(cast.kernel_ir);
  EXPECT_NO_THROW(render_cuda_kernel(*cast.kernel_ir, "k"));
}

// A concatenation's parts share one C++ function through their arguments;
// on CUDA each part is a launch of its own, its arguments substituted.
TEST(CudaRender, EachPartOfAConcatenationIsALaunchOfItsOwn) {
  ki::Kernel k = first_group_ir(
      "def @main(%a: Tensor[(1, 3, 40), float32], %b: Tensor[(1, 5, 40), float32]) {\n"
      "  %0 = (%a, %b);\n  %1 = concatenate(%0, axis=1);\n  nn.relu(%1)\n}\n");
  ASSERT_EQ(k.body.size(), 2u);
  EXPECT_FALSE(k.body[1]->arguments.empty());
  CudaKernel cuda = render_cuda_kernel(k, "parts");
  ASSERT_EQ(cuda.launches.size(), 2u);
  expect_code_holds(cuda.code, {"in0_a[", "in1_b[", " + 120] = "});
  for (const char* argument : {"part_input[", "part_base", "part_begin"})
    EXPECT_EQ(cuda.code.find(argument), std::string::npos) << argument << "\n" << cuda.code;
}

TEST(CudaRender, WhatItCannotPrintIsAClearError) {
  ki::Kernel blocked = first_group_ir(kBroadcastAddRelu);
  blocked.buffers[0].layout = "nChw8c";
  try {
    render_cuda_kernel(blocked, "k");
    FAIL() << "a blocked layout rendered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dense row-major buffers only; in0_x is nChw8c"), std::string::npos)
        << e.what();
  }
  ki::Kernel copy;
  copy.buffers = {{"in0_x", DType::kFloat32, ki::BufferRole::kInput, 0, true, {4}, "", ""},
                  {"out0", DType::kFloat32, ki::BufferRole::kOutput, 0, false, {4}, "", ""}};
  copy.body = {ki::parallel("c", 1, 1, {ki::copy("out0", "in0_x", 4)}, "copy")};
  EXPECT_THROW(render_cuda_kernel(copy, "k"), Error);
  // The entry runs a primitive before the launches, never between them.
  ki::Kernel late = first_group_ir(kBroadcastAddRelu);
  late.body.push_back(ki::run_primitive("{}", "out0"));
  try {
    render_cuda_kernel(late, "k");
    FAIL() << "a primitive after the loops rendered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runs a library primitive only as a kernel's first statement"),
              std::string::npos)
        << e.what();
  }
}

// float64 would call CUDA's float math (expf); the wide and unsigned
// integers are untested on a GPU: refused by name, never printed in float.
TEST(CudaRender, Float64AndTheUnsignedIntegersAreRefusedByName) {
  for (const char* dtype : {"float64", "int16", "uint16", "uint32", "uint64"}) {
    std::string text =
        std::string("def @main(%x: Tensor[(4, 8), ") + dtype + "]) {\n  %0 = add(%x, %x);\n  abs(%0)\n}\n";
    ki::Kernel k = first_group_ir(text);
    try {
      render_cuda_kernel(k, "k");
      FAIL() << dtype << " rendered";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("does not print ") + dtype + " buffers yet (in0_x)"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CudaCompile, TheTargetNamesTheArchitecture) {
  EXPECT_EQ(cuda_arch(Target::get("cuda")), "sm_90");
  EXPECT_EQ(cuda_arch(Target::get("cuda -arch=sm_80")), "sm_80");
  EXPECT_EQ(cuda_compute_capability("sm_90"), 90);
  try {
    cuda_arch(Target::get("cuda -arch=hopper"));
    FAIL() << "an architecture without sm_";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-arch must name a GPU architecture such as sm_90, not 'hopper'"),
              std::string::npos)
        << e.what();
  }
}

// Modules of one fused group each, over every kind of loop the renderer
// maps: rows across lanes, chunks, warp reductions, local-array tiles,
// narrow floats, an index permutation.
const std::vector<std::string>& one_group_modules() {
  static const std::vector<std::string> modules = {
      kBroadcastAddRelu, kRowSum, kSoftmax,
      "def @main(%x: Tensor[(4, 40), float32]) {\n  %0 = erf(%x);\n  %1 = tanh(%0);\n  sigmoid(%1)\n}\n",
      "def @main(%x: Tensor[(8, 33), float16], %y: Tensor[(8, 33), float16]) {\n  %0 = multiply(%x, %y);\n"
      "  exp(%0)\n}\n",
      "def @main(%x: Tensor[(6, 5, 300), float32]) {\n  %0 = exp(%x);\n  %1 = sum(%0, axis=[1]);\n  nn.relu(%1)\n}\n",
      "def @main(%x: Tensor[(6, 300), float32]) {\n  max(%x, axis=[1])\n}\n",
      "def @main(%x: Tensor[(6, 300), bfloat16]) {\n  mean(%x, axis=[1])\n}\n",
      "def @main(%x: Tensor[(3, 4, 5), float32]) {\n  %0 = transpose(%x, axes=[2, 0, 1]);\n  nn.relu(%0)\n}\n",
      "def @main(%x: Tensor[(1000003), float32], %y: Tensor[(1000003), float32]) {\n  %0 = subtract(%x, %y);\n"
      "  abs(%0)\n}\n",
      "def @main(%x: Tensor[(6, 300), float32], %g: Tensor[(300), float32], %b: Tensor[(300), float32]) {\n"
      "  %0 = nn.layer_norm(%x, %g, %b);\n  nn.relu(%0)\n}\n",
      "def @main(%x: Tensor[(1100, 3), float32]) {\n  nn.softmax(%x, axis=0)\n}\n",
      "def @main(%x: Tensor[(4, 2048), float32]) {\n  %0 = nn.softmax(%x);\n  multiply(%0, 2048f)\n}\n",
      // Anchors neither cuBLASLt nor cuDNN takes, as loops: a float16
      // product, an integer convolution, a dilated pool and an average
      // whose ceil_mode window counts padding on one side only.
      "def @main(%x: Tensor[(5, 40), float16], %w: Tensor[(7, 40), float16]) {\n  nn.dense(%x, %w)\n}\n",
      "def @main(%x: Tensor[(1, 3, 9, 8), int32], %w: Tensor[(4, 3, 3, 3), int32]) {\n"
      "  nn.conv2d(%x, %w, padding=[1, 1])\n}\n",
      "def @main(%x: Tensor[(2, 3, 11, 10), float32]) {\n"
      "  nn.max_pool2d(%x, pool_size=[3, 3], dilation=[2, 2])\n}\n",
      "def @main(%x: Tensor[(1, 4, 10, 10), float32]) {\n"
      "  nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, count_include_pad=True)\n"
      "}\n",
  };
  return modules;
}

// Kernels of real fused groups, each rendered and compiled by NVRTC.
TEST(CudaCompile, NvrtcCompilesTheKernelsOfFusedGroups) {
  if (!cuda_toolkit_available())
    GTEST_SKIP() << "this build has no CUDA toolkit (SY_CUDA=OFF): NVRTC compilation is not checked here";
  std::vector<std::string> modules = one_group_modules();
  modules.push_back("def @main(%x: Tensor[(4, 40), int32], %y: Tensor[(4, 40), int32]) {\n  divide(%x, %y)\n}\n");
  for (const std::string& text : modules) {
    CudaKernel cuda = render_cuda_kernel(first_group_ir(text), "k");
    try {
      Cubin cubin = compile_cuda(cuda.code, "k", "sm_90");
      ASSERT_GE(cubin.image.size(), 4u) << text;
      EXPECT_EQ(std::string(cubin.image.begin(), cubin.image.begin() + 4), "\x7f" "ELF") << text;
      EXPECT_EQ(cubin.arch, "sm_90");
    } catch (const Error& e) {
      ADD_FAILURE() << text << e.what() << "\n" << cuda.code;
    }
  }
}

// On a GPU (scripts/gpu-check.sh): each kernel run on cuda:0 gives the
// interpreter's outputs on the same random inputs. Here it skips, saying
// why; SY_REQUIRE_GPU=1 makes a missing GPU a failure.
TEST(CudaRun, KernelsOfFusedGroupsMatchTheInterpreterOnCuda0) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit (SY_CUDA=OFF): nothing to run";
  std::unique_ptr<CudaGpu> gpu;
  try {
    gpu = CudaGpu::open(0);
  } catch (const RuntimeError& e) {
    if (getenv("SY_REQUIRE_GPU")) FAIL() << e.what();
    GTEST_SKIP() << e.what();
  }
  std::string arch = "sm_" + std::to_string(gpu->compute_capability());
  for (const std::string& text : one_group_modules()) {
    SCOPED_TRACE(text);
    IRModule mod = parse_module(text, "cuda.sy");
    std::map<std::string, NDArray> inputs = random_inputs(mod, 7);
    std::vector<NDArray> expected = interpret(mod, inputs);
    IRModule fused = FuseOps()(infer_type(mod));
    Call group = downcast<CallNode>(fused.lookup("main")->body);
    KernelSource source = lower_kernel_source(downcast<FunctionNode>(group->op), "k", {}, cuda_libraries());
    ASSERT_TRUE(source.kernel_ir);
    CudaKernel cuda = render_cuda_kernel(*source.kernel_ir, "k");
    ASSERT_FALSE(cuda.may_fault);
    void* module = gpu->load_module(compile_cuda(cuda.code, "k", arch).image);
    // The Buffers parameter: one device address per buffer, in kernel order.
    std::vector<uint64_t> addresses;
    std::vector<NDArray> outputs;
    for (const ki::Buffer& b : source.kernel_ir->buffers) {
      if (b.role == ki::BufferRole::kInput) {
        const NDArray& in = inputs.at(downcast<VarNode>(group->args.at(size_t(b.slot)))->name_hint);
        addresses.push_back(gpu->allocate(in.nbytes()));
        gpu->copy_to_gpu(addresses.back(), in.data(), in.nbytes());
      } else {
        outputs.emplace_back(b.dtype, b.shape);
        addresses.push_back(gpu->allocate(outputs.back().nbytes()));
      }
    }
    for (const CudaLaunch& launch : cuda.launches)
      gpu->launch(gpu->function(module, launch.function), launch.grid, launch.block, addresses.data(),
                  addresses.size() * sizeof(uint64_t));
    gpu->synchronize();
    size_t out = 0;
    for (size_t i = 0; i < addresses.size(); ++i) {
      if (source.kernel_ir->buffers[i].role == ki::BufferRole::kOutput) {
        NDArray& result = outputs.at(out);
        gpu->copy_to_host(result.data(), addresses[i], result.nbytes());
        bool narrow = result.dtype() == DType::kFloat16 || result.dtype() == DType::kBFloat16;
        EXPECT_EQ(compare_arrays(result, expected.at(out), narrow ? 1e-2 : 1e-5, narrow ? 1e-2 : 1e-6), "");
        ++out;
      }
      gpu->release(addresses[i]);
    }
  }
}

TEST(CudaCompile, NvrtcErrorsCarryItsLog) {
  if (!cuda_toolkit_available()) GTEST_SKIP() << "this build has no CUDA toolkit (SY_CUDA=OFF): no NVRTC to fail";
  try {
    compile_cuda("extern \"C\" __global__ void k() { undeclared_name = 1; }", "broken", "sm_90");
    FAIL() << "compiled";
  } catch (const Error& e) {
    expect_code_holds(e.what(), {"NVRTC could not compile broken for sm_90", "undeclared_name"});
  }
}

// What CI sees: a build without a toolkit says so when asked to compile for
// a GPU.
TEST(CudaCompile, WithoutAToolkitCompilingIsAClearError) {
  if (cuda_toolkit_available())
    GTEST_SKIP() << "this build has a CUDA toolkit; the no-toolkit error is checked in a SY_CUDA=OFF build";
  try {
    compile_cuda("", "fused_add", "sm_90");
    FAIL() << "compiled without a toolkit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot compile fused_add for sm_90: this Switchyard was built without a "
                                         "CUDA toolkit"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace cuda_render_test
}  // namespace switchyard::testing
