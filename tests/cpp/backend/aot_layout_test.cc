// Layout planning: activations between oneDNN convolutions and pools stay in
// the layout oneDNN computes in (channels last on AVX-512, channel blocks
// where a depthwise convolution reads them or on AVX2), buffers any other
// code touches stay plain, and the artifact computes what the interpreter
// does, on one device and split across two (a copy between CPU devices
// keeps the layout).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "aot_test_util.h"
#include "placement/placement_rules.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_layout_test {

// A residual block with a pool, its channels (12) not a multiple of the
// block (8 or 16), so blocked buffers are padded; the pool's result is read
// by a convolution and as the block's residual; a loop kernel (the softmax)
// reads the last convolution's result.
const char* kResidualBlock =
    "def @main(%x: Tensor[(1, 3, 17, 15), float32], %w0: Tensor[(12, 3, 3, 3), float32],\n"
    "          %b0: Tensor[(12), float32], %w1: Tensor[(12, 12, 3, 3), float32],\n"
    "          %w2: Tensor[(12, 12, 1, 1), float32]) -> Tensor[(1, 12, 9, 8), float32] {\n"
    "  %0 = nn.conv2d(%x, %w0, padding=[1, 1]);\n"
    "  %1 = nn.relu(nn.bias_add(%0, %b0));\n"
    "  %2 = nn.max_pool2d(%1, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]);\n"
    "  %3 = nn.relu(nn.conv2d(%2, %w1, padding=[1, 1]));\n"
    "  %4 = nn.relu(add(nn.conv2d(%3, %w2), %2));\n"
    "  nn.softmax(nn.conv2d(%4, %w2), axis=1)\n"
    "}\n";

// An inverted residual (MobileNetV2's block): expand, depthwise 3x3,
// project; the expand is 3x3 here, so that it never fuses with the
// depthwise convolution (a 1x1 may: kExpandedBlock).
const char* kDepthwiseBlock =
    "def @main(%x: Tensor[(1, 8, 12, 10), float32], %w0: Tensor[(24, 8, 3, 3), float32],\n"
    "          %w1: Tensor[(24, 1, 3, 3), float32], %w2: Tensor[(8, 24, 1, 1), float32]) ->\n"
    "          Tensor[(1, 8, 12, 10), float32] {\n"
    "  %0 = clip(nn.conv2d(%x, %w0, padding=[1, 1]), a_min=0f, a_max=6f);\n"
    "  %1 = clip(nn.conv2d(%0, %w1, padding=[1, 1], groups=24), a_min=0f, a_max=6f);\n"
    "  nn.softmax(nn.conv2d(%1, %w2), axis=1)\n"
    "}\n";

// MobileNetV2's second block, narrowed: an expand that only the depthwise
// convolution reads, at 112x112 (oneDNN 2.6 fuses the two into one kernel
// on AVX-512 there), then the projection and a softmax loop.
const char* kExpandedBlock =
    "def @main(%x: Tensor[(1, 8, 112, 112), float32], %w0: Tensor[(48, 8, 1, 1), float32],\n"
    "          %b0: Tensor[(48), float32], %w1: Tensor[(48, 1, 3, 3), float32], %b1: Tensor[(48), float32],\n"
    "          %w2: Tensor[(8, 48, 1, 1), float32]) -> Tensor[(1, 8, 56, 56), float32] {\n"
    "  %0 = clip(nn.bias_add(nn.conv2d(%x, %w0), %b0), a_min=0f, a_max=6f);\n"
    "  %1 = nn.conv2d(%0, %w1, strides=[2, 2], padding=[1, 1], groups=48);\n"
    "  %2 = clip(nn.bias_add(%1, %b1), a_min=0f, a_max=6f);\n"
    "  nn.softmax(nn.conv2d(%2, %w2), axis=1)\n"
    "}\n";

struct Built {
  Manifest manifest;
  std::vector<NDArray> actual, expected;
  std::string entry_source;
};

Built build_and_run(const std::string& devices, const std::vector<std::string>& rules, const std::string& name,
                    const char* model = kResidualBlock) {
  IRModule mod = parse_module(model, name + ".sy");
  BuildOptions options = aot_options(devices);
  options.emit_source = true;
  for (const std::string& rule : rules) options.rules.push_back(parse_placement_rule(rule, options.config));
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, options, dir);
  auto artifact = Artifact::load(dir);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 3);
  std::ifstream entry(dir + "/src/sy_model_entry.cc");
  std::stringstream text;
  text << entry.rdbuf();
  return {artifact->manifest(), artifact->run(inputs).outputs, interpret(mod, inputs), text.str()};
}

// The arena offset of buffer `b` in the generated entry ("b7 = arena_0 + 128;"), or -1.
int64_t arena_offset(const std::string& entry, const std::string& buffer) {
  std::smatch m;
  if (!std::regex_search(entry, m, std::regex(" " + buffer + " = arena_0 \\+ ([0-9]+);"))) return -1;
  return std::stoll(m[1]);
}

// The buffers kernel `k` of the entry reads and writes, in order.
std::pair<std::vector<std::string>, std::vector<std::string>> kernel_buffers(const std::string& entry, int k) {
  std::smatch m;
  std::regex step("// kernel " + std::to_string(k) +
                  ":[^\\n]*\\n[^\\n]*\\n\\s*const void\\* const inputs\\[\\] = \\{([^}]*)\\};\\n\\s*void\\* const "
                  "outputs\\[\\] = \\{([^}]*)\\};");
  if (!std::regex_search(entry, m, step)) return {};
  auto split = [](const std::string& list) {
    std::vector<std::string> names;
    std::stringstream in(list);
    for (std::string name; std::getline(in, name, ',');) names.push_back(name.substr(name.find('b')));
    return names;
  };
  return {split(m[1]), split(m[2])};
}

std::string blocked_format() { return "nChw" + std::to_string(dnnl_channel_block()) + "c"; }
// The layout of activations that no depthwise convolution reads.
std::string planned_format() { return dnnl_uses_avx512() ? "nhwc" : blocked_format(); }

TEST(AotLayout, ActivationsBetweenPrimitivesStayInOneDnnLayouts) {
  Built b = build_and_run("cpu:0", {}, "layout_one_device");
  ASSERT_EQ(b.actual.size(), 1u);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  // conv0 -> pool -> conv1 -> conv2 (+ pool's result) -> conv3 -> softmax loop.
  std::vector<const PrimitiveSpec*> by_kernel;
  for (const ManifestKernel& k : b.manifest.kernels)
    by_kernel.push_back(k.primitive >= 0 ? &b.manifest.primitives[size_t(k.primitive)] : nullptr);
  ASSERT_EQ(by_kernel.size(), 6u);
  for (size_t k = 0; k < 5; ++k) ASSERT_TRUE(by_kernel[k]) << "kernel " << k;
  EXPECT_EQ(by_kernel[5], nullptr);  // the softmax
  const std::string format = planned_format();
  EXPECT_EQ(by_kernel[0]->src.format, "");  // the model's input
  EXPECT_EQ(by_kernel[0]->dst.format, format);
  EXPECT_EQ(by_kernel[1]->src.format, format);
  EXPECT_EQ(by_kernel[1]->dst.format, format);
  EXPECT_EQ(by_kernel[2]->src.format, format);
  EXPECT_EQ(by_kernel[3]->src.format, format);
  ASSERT_EQ(by_kernel[3]->post_ops.size(), 2u);
  EXPECT_EQ(by_kernel[3]->post_ops[0].kind, PrimitivePostOp::Kind::kSum);
  EXPECT_EQ(by_kernel[3]->post_ops[0].operand.format, format);  // the pool's result as residual
  EXPECT_EQ(by_kernel[4]->src.format, format);
  EXPECT_EQ(by_kernel[4]->dst.format, "");  // read by the softmax loop
  // The residual's last reader writes its result over it: no copy into the destination.
  auto [inputs, outputs] = kernel_buffers(b.entry_source, 3);
  ASSERT_EQ(inputs.size(), 3u) << b.entry_source;
  ASSERT_EQ(outputs.size(), 1u);
  const std::string& residual = inputs[size_t(by_kernel[3]->post_ops[0].input)];
  EXPECT_GE(arena_offset(b.entry_source, residual), 0) << b.entry_source;
  EXPECT_EQ(arena_offset(b.entry_source, outputs[0]), arena_offset(b.entry_source, residual)) << b.entry_source;
  EXPECT_NE(arena_offset(b.entry_source, outputs[0]), arena_offset(b.entry_source, inputs[0]));
}

TEST(AotLayout, ActivationsADepthwiseConvolutionReadsStayInChannelBlocks) {
  Built b = build_and_run("cpu:0", {}, "layout_depthwise", kDepthwiseBlock);
  ASSERT_EQ(b.actual.size(), 1u);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  ASSERT_EQ(b.manifest.kernels.size(), 4u);  // expand, depthwise, project, softmax
  std::vector<PrimitiveSpec> convolutions;
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_GE(b.manifest.kernels[k].primitive, 0) << "kernel " << k;
    convolutions.push_back(b.manifest.primitives[size_t(b.manifest.kernels[k].primitive)]);
  }
  EXPECT_EQ(convolutions[0].src.format, "");  // the model's input
  EXPECT_EQ(convolutions[0].dst.format, blocked_format());
  EXPECT_EQ(convolutions[1].src.format, blocked_format());
  EXPECT_EQ(convolutions[1].dst.format, blocked_format());
  EXPECT_EQ(convolutions[2].src.format, blocked_format());
  EXPECT_EQ(convolutions[2].dst.format, "");  // read by the softmax loop
}

// A convolution adding its own source (conv(x) + x passes x once, as both
// the source and the sum's residual) where x dies: its result must not take
// over x's memory, which the primitive still reads.
TEST(AotLayout, AConvolutionAddingItsOwnSourceNeverWritesOverIt) {
  const char* model =
      "def @main(%x: Tensor[(1, 4, 10, 9), float32], %w0: Tensor[(16, 4, 1, 1), float32],\n"
      "          %w1: Tensor[(16, 16, 3, 3), float32], %w2: Tensor[(8, 16, 1, 1), float32]) ->\n"
      "          Tensor[(1, 8, 10, 9), float32] {\n"
      "  %0 = nn.relu(nn.conv2d(%x, %w0));\n"
      "  %1 = nn.relu(add(nn.conv2d(%0, %w1, padding=[1, 1]), %0));\n"
      "  nn.softmax(nn.conv2d(%1, %w2), axis=1)\n"
      "}\n";
  Built b = build_and_run("cpu:0", {}, "layout_own_residual", model);
  ASSERT_EQ(b.actual.size(), 1u);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  auto [inputs, outputs] = kernel_buffers(b.entry_source, 1);
  ASSERT_EQ(inputs.size(), 2u) << b.entry_source;  // %0 once, and %w1
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_NE(arena_offset(b.entry_source, outputs[0]), arena_offset(b.entry_source, inputs[0])) << b.entry_source;
}

// The spec fuse_depthwise_convolutions would make of a 1x1 and the depthwise
// convolution after it (kernel inputs appended: weights, bias).
PrimitiveSpec fused_by_hand(const PrimitiveSpec& pointwise, const PrimitiveSpec& depthwise) {
  PrimitiveSpec fused = pointwise;
  fused.dst = depthwise.dst;
  PrimitivePostOp post{PrimitivePostOp::Kind::kDepthwise};
  post.input = 3;
  post.operand = depthwise.weights;
  post.bias_input = 4;
  post.stride = depthwise.strides[0];
  post.padding = depthwise.padding_l[0];
  fused.post_ops.push_back(post);
  fused.post_ops.insert(fused.post_ops.end(), depthwise.post_ops.begin(), depthwise.post_ops.end());
  return fused;
}

bool one_kernel(const PrimitiveSpec& fused) {
  return DnnlPrimitive(fused, default_thread_count()).implementation().rfind("ref_fused", 0) != 0;
}

// The expand and the depthwise convolution become one primitive exactly
// where oneDNN runs them as one kernel; either way the artifact computes
// what the interpreter does.
TEST(AotLayout, AnExpandOnlyItsDepthwiseConvolutionReadsFusesWithItWhereOneDnnRunsThemAsOneKernel) {
  Built b = build_and_run("cpu:0", {}, "layout_expanded", kExpandedBlock);
  ASSERT_EQ(b.actual.size(), 1u);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  const Manifest& m = b.manifest;
  ASSERT_GE(m.kernels.size(), 3u);
  const PrimitiveSpec& first = m.primitives.at(size_t(m.kernels[0].primitive));
  bool fused = !first.post_ops.empty() && first.post_ops.back().kind == PrimitivePostOp::Kind::kEltwise &&
               first.post_ops.size() == 3 && first.post_ops[1].kind == PrimitivePostOp::Kind::kDepthwise;
  if (fused) {
    std::cout << "fused: " << m.kernels[0].name << "\n";
    EXPECT_EQ(m.kernels.size(), 3u);  // expand with depthwise, project, softmax
    EXPECT_EQ(first.dst.dims, (std::vector<int64_t>{1, 48, 56, 56}));
    EXPECT_EQ(first.dst.format, blocked_format());
    EXPECT_EQ(m.kernels[0].depthwise_weights, -1);  // an entry parameter: reordered in every run
    EXPECT_TRUE(one_kernel(first));
  } else {
    std::cout << "not fused: oneDNN chains them on this CPU\n";
    ASSERT_EQ(m.kernels.size(), 4u);
    EXPECT_FALSE(one_kernel(fused_by_hand(first, m.primitives.at(size_t(m.kernels[1].primitive)))));
  }
}

// A copy between two CPU devices moves a laid-out value's bytes as they lie:
// the convolution on cpu:0 writes the layout the pool on cpu:1 reads.
TEST(AotLayout, ValuesCrossingCpuDevicesKeepTheirLayout) {
  Built b = build_and_run("cpu:0,cpu:1", {"op:nn.conv2d=cpu:0", "op:nn.max_pool2d=cpu:1"}, "layout_two_devices");
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  ASSERT_EQ(b.manifest.copies.size(), 2u);  // the pool's input there and its result back
  const PrimitiveSpec& conv0 = b.manifest.primitives[size_t(b.manifest.kernels[0].primitive)];
  const PrimitiveSpec& pool = b.manifest.primitives[size_t(b.manifest.kernels[1].primitive)];
  EXPECT_EQ(b.manifest.kernels[1].device, 1);
  EXPECT_EQ(conv0.dst.format, planned_format());
  EXPECT_EQ(pool.src.format, planned_format());
  EXPECT_EQ(pool.dst.format, planned_format());
}

// The same where the layout pads channels (24 in blocks of 16 on AVX-512):
// the copy moves the padded size, and the depthwise convolution on cpu:1
// reads the expansion cpu:0 wrote in blocks without a conversion.
TEST(AotLayout, APaddedLayoutCrossesCpuDevicesWithItsPadding) {
  Built b = build_and_run("cpu:0,cpu:1", {"node:layout_padded_two_devices.sy:4:*=cpu:0", "node:layout_padded_two_devices.sy:5:*=cpu:1",
                           "node:layout_padded_two_devices.sy:6:*=cpu:0"},
                          "layout_padded_two_devices", kDepthwiseBlock);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  const int64_t block = dnnl_channel_block();
  const uint64_t padded = uint64_t((24 + block - 1) / block * block) * 12 * 10 * sizeof(float);
  bool crossed = false;
  for (const ManifestCopy& copy : b.manifest.copies)
    if (copy.src_device == 0 && copy.dst_device == 1) {
      EXPECT_EQ(copy.bytes, padded);
      crossed = true;
    }
  EXPECT_TRUE(crossed);
  int depthwise = 0;
  for (const ManifestKernel& kernel : b.manifest.kernels) {
    if (kernel.primitive < 0) continue;  // the softmax's loops
    const PrimitiveSpec& spec = b.manifest.primitives[size_t(kernel.primitive)];
    EXPECT_NE(spec.kind, PrimitiveKind::kReorder) << "a conversion around the copy";
    if (spec.weights.dims.size() != 5) continue;
    ++depthwise;
    EXPECT_EQ(kernel.device, 1);
    EXPECT_EQ(spec.src.format, blocked_format());
  }
  EXPECT_EQ(depthwise, 1);
}

// An expansion and the depthwise convolution reading it on two devices are
// never fused into one kernel (oneDNN would run both on one device).
TEST(AotLayout, AnExpandAndItsDepthwiseConvolutionOnTwoDevicesStayTwoKernels) {
  Built b = build_and_run("cpu:0,cpu:1", {"node:layout_expanded_two_devices.sy:5:*=cpu:0", "node:layout_expanded_two_devices.sy:6:*=cpu:1",
                           "node:layout_expanded_two_devices.sy:7:*=cpu:1"},
                          "layout_expanded_two_devices", kExpandedBlock);
  EXPECT_EQ(compare_arrays(b.actual[0], b.expected[0], 1e-4, 1e-4), "");
  int on_second = 0;
  for (const ManifestKernel& kernel : b.manifest.kernels) on_second += kernel.device == 1;
  EXPECT_GE(on_second, 1);
  EXPECT_GE(b.manifest.copies.size(), 1u);
}

}  // namespace aot_layout_test
}  // namespace switchyard::testing
