// Compiled code against its peers, measured in the same run:
//  - a 10-operator element-wise chain over 16M floats vs one memcpy of the
//    same bytes (aim: within 1.3x);
//  - dense 1024x1024x1024 float32 vs oneDNN's SGEMM on the same problem, the
//    best SGEMM this machine has (aim: at least 70%);
//  - a 3x3 64->64 convolution at 56x56 with bias and ReLU (ResNet's layer 1)
//    vs oneDNN's own best on that shape: every layout its choice (blocked
//    activations included), only the primitive timed;
//  - a small CNN and the MLP example end to end, with each device's planned
//    arena against the planner's lower bound (aim: within 1.1x).
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <unordered_map>

#include "pipeline/build.h"
#include "runtime/artifact.h"
#include "text/parser.h"

namespace switchyard {
namespace {

struct Compiled {
  std::shared_ptr<Artifact> artifact;
  std::vector<NDArray> inputs;
  BuildReport report;
};

NDArray random_array(const std::vector<int64_t>& shape, uint32_t seed) {
  NDArray a(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 0.1f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = dist(rng);
  return a;
}

Compiled compile(const std::string& name, const std::string& text, const std::string& devices) {
  std::string dir = std::filesystem::temp_directory_path() / ("sy_bench_" + name);
  BuildOptions options{.config = CompilationConfig::parse(devices)};
  Compiled c;
  IRModule mod = parse_module(text, name + ".sy");
  c.report = build_artifact(mod, options, dir);
  c.artifact = Artifact::load(dir);
  uint32_t seed = 1;
  for (const ManifestTensor& in : c.artifact->manifest().inputs) c.inputs.push_back(random_array(in.shape, seed++));
  return c;
}

void report_memory(benchmark::State& state, const BuildReport& report) {
  for (const DeviceMemoryReport& m : report.memory) {
    state.counters[m.device + "_arena_bytes"] = double(m.planned_bytes);
    state.counters[m.device + "_lower_bound"] = double(m.lower_bound_bytes);
  }
}

constexpr int64_t kChainElements = 16 * 1024 * 1024;

void BM_ElementwiseChain10(benchmark::State& state) {
  static Compiled c = compile("chain10", R"(
def @main(%x: Tensor[(16777216), float32]) -> Tensor[(16777216), float32] {
  %0 = add(%x, 1f);
  %1 = multiply(%0, 2f);
  %2 = nn.relu(%1);
  %3 = subtract(%2, 0.5f);
  %4 = abs(%3);
  %5 = negative(%4);
  %6 = maximum(%5, -1f);
  %7 = minimum(%6, 3f);
  %8 = multiply(%7, 0.25f);
  add(%8, 0.1f)
})",
                              "cpu:0");
  // Caller-owned output, like the memcpy's destination: only the kernel is timed.
  NDArray out(DType::kFloat32, {kChainElements});
  std::vector<TensorView> in{{c.inputs[0].data(), DType::kFloat32, {kChainElements}}};
  std::vector<MutableTensorView> outs{{out.data(), DType::kFloat32, {kChainElements}}};
  for (auto _ : state) c.artifact->run_buffers(in, outs, {.record_stats = false});
  state.SetBytesProcessed(state.iterations() * kChainElements * 4 * 2);
}

void BM_MemcpySameBytes(benchmark::State& state) {
  NDArray src = random_array({kChainElements}, 1);
  NDArray dst(DType::kFloat32, {kChainElements});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.nbytes());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * kChainElements * 4 * 2);
}

void BM_CompiledDense1024(benchmark::State& state) {
  static Compiled c = compile("dense1024", R"(
def @main(%x: Tensor[(1024, 1024), float32], %w: Tensor[(1024, 1024), float32]) -> Tensor[(1024, 1024), float32] {
  nn.dense(%x, %w)
})",
                              "cpu:0");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_OneDnnSgemm1024(benchmark::State& state) {
  NDArray a = random_array({1024, 1024}, 1), b = random_array({1024, 1024}, 2);
  NDArray out(DType::kFloat32, {1024, 1024});
  for (auto _ : state)
    dnnl_sgemm('N', 'T', 1024, 1024, 1024, 1.0f, a.as<float>(), 1024, b.as<float>(), 1024, 0.0f, out.as<float>(), 1024);
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}

// ResNet-18's layer-1 convolution: weights and bias are constants (in
// weights.bin), as in a real model.
constexpr int64_t kConvChannels = 64, kConvSize = 56;
constexpr double kConvFlops = 2.0 * kConvChannels * kConvChannels * 9 * kConvSize * kConvSize;

// A float32 tensor constant in the text IR's base64 form.
std::string tensor_constant(const NDArray& a) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* bytes = static_cast<const unsigned char*>(a.data());
  size_t n = size_t(a.nbytes());
  std::string text;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = uint32_t(bytes[i]) << 16 | (i + 1 < n ? uint32_t(bytes[i + 1]) << 8 : 0u) |
                 (i + 2 < n ? uint32_t(bytes[i + 2]) : 0u);
    text += alphabet[(v >> 18) & 63];
    text += alphabet[(v >> 12) & 63];
    text += i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    text += i + 2 < n ? alphabet[v & 63] : '=';
  }
  std::string shape;
  for (int64_t d : a.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  return "Tensor[(" + shape + "), float32]{b64\"" + text + "\"}";
}

void BM_CompiledConv3x3Bias(benchmark::State& state) {
  static Compiled c = [] {
    NDArray w = random_array({kConvChannels, kConvChannels, 3, 3}, 7), b = random_array({kConvChannels}, 8);
    return compile("conv3x3", "def @main(%x: Tensor[(1, 64, 56, 56), float32]) -> Tensor[(1, 64, 56, 56), float32] {\n"
                              "  %0 = nn.conv2d(%x, " + tensor_constant(w) + ", padding=[1, 1]);\n"
                              "  %1 = nn.bias_add(%0, " + tensor_constant(b) + ");\n"
                              "  nn.relu(%1)\n}\n",
                   "cpu:0");
  }();
  NDArray out(DType::kFloat32, {1, kConvChannels, kConvSize, kConvSize});
  std::vector<TensorView> in{{c.inputs[0].data(), DType::kFloat32, c.inputs[0].shape()}};
  std::vector<MutableTensorView> outs{{out.data(), DType::kFloat32, out.shape()}};
  for (auto _ : state) c.artifact->run_buffers(in, outs, {.record_stats = false});
  state.counters["GFLOPs"] = benchmark::Counter(kConvFlops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_OneDnnConv3x3BiasBest(benchmark::State& state) {
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::dims image{1, kConvChannels, kConvSize, kConvSize}, weights{kConvChannels, kConvChannels, 3, 3};
  dnnl::convolution_forward::desc operation(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, {image, f32, tag::any},
      {weights, f32, tag::any}, {{kConvChannels}, f32, tag::x}, {image, f32, tag::any}, {1, 1}, {0, 0}, {1, 1}, {1, 1});
  dnnl::post_ops relu;
  relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(relu);
  dnnl::convolution_forward::primitive_desc description(operation, attr, engine);
  // Every operand already in the layout the primitive chose: only the primitive runs.
  NDArray x = random_array(image, 1), w = random_array(weights, 7), b = random_array({kConvChannels}, 8);
  dnnl::memory src(description.src_desc(), engine), wei(description.weights_desc(), engine),
      dst(description.dst_desc(), engine), bias(description.bias_desc(), engine, b.data());
  dnnl::memory plain_x({image, f32, tag::nchw}, engine, x.data()), plain_w({weights, f32, tag::oihw}, engine, w.data());
  dnnl::reorder(plain_x, src).execute(stream, plain_x, src);
  dnnl::reorder(plain_w, wei).execute(stream, plain_w, wei);
  dnnl::convolution_forward primitive(description);
  std::unordered_map<int, dnnl::memory> arguments{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  for (auto _ : state) {
    primitive.execute(stream, arguments);
    stream.wait();
  }
  state.SetLabel(description.impl_info_str());
  state.counters["GFLOPs"] = benchmark::Counter(kConvFlops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SmallCnn(benchmark::State& state) {
  static Compiled c = compile("small_cnn", R"(
def @main(%x: Tensor[(1, 3, 64, 64), float32] @cpu:0,
          %w1: Tensor[(16, 3, 3, 3), float32], %b1: Tensor[(1, 16, 1, 1), float32],
          %w2: Tensor[(32, 16, 3, 3), float32], %b2: Tensor[(1, 32, 1, 1), float32],
          %w3: Tensor[(10, 32), float32], %b3: Tensor[(10), float32]) -> Tensor[(1, 10), float32] @cpu:1 {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);
  %4 = nn.conv2d(%3, %w2, padding=[1, 1, 1, 1]);
  %5 = add(%4, %b2);
  %6 = nn.relu(%5);
  %7 = nn.global_avg_pool2d(%6);
  %8 = reshape(%7, newshape=[1, 32]);
  %9 = on_device(%8, device="cpu:1");
  %10 = nn.dense(%9, %w3);
  %11 = add(%10, %b3);
  nn.softmax(%11)
})",
                              "cpu:0,cpu:1");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  report_memory(state, c.report);
}

void BM_MlpExample(benchmark::State& state) {
  static Compiled c = compile("mlp", R"(
def @main(%x: Tensor[(8, 784), float32] @cpu:0,
          %w1: Tensor[(512, 784), float32], %b1: Tensor[(512), float32],
          %w2: Tensor[(256, 512), float32], %b2: Tensor[(256), float32],
          %w3: Tensor[(10, 256), float32], %b3: Tensor[(10), float32]) -> Tensor[(8, 10), float32] @cpu:1 {
  %0 = nn.dense(%x, %w1);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2);
  %4 = add(%3, %b2);
  %5 = nn.relu(%4);
  %6 = on_device(%5, device="cpu:1");
  %7 = nn.dense(%6, %w3);
  %8 = add(%7, %b3);
  nn.softmax(%8)
})",
                              "cpu:0,cpu:1");
  for (auto _ : state) benchmark::DoNotOptimize(c.artifact->run(c.inputs));
  report_memory(state, c.report);
}

BENCHMARK(BM_ElementwiseChain10)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_MemcpySameBytes)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_CompiledDense1024)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_OneDnnSgemm1024)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_CompiledConv3x3Bias)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_OneDnnConv3x3BiasBest)->Unit(benchmark::kMillisecond)->MinTime(2)->UseRealTime();
BENCHMARK(BM_SmallCnn)->Unit(benchmark::kMicrosecond)->MinTime(1)->UseRealTime();
BENCHMARK(BM_MlpExample)->Unit(benchmark::kMicrosecond)->MinTime(1)->UseRealTime();

}  // namespace
}  // namespace switchyard

BENCHMARK_MAIN();
