// Generated window loops against oneDNN, one row per operator family and
// shape class (convolution, pooling, ConvTranspose; batch 1, float32): each
// row's program is compiled twice, on the target "cpu" (the window is a
// oneDNN primitive) and on "cpu -libs=none" (it is the generated loop that
// runs wherever oneDNN takes no configuration), and every iteration runs
// both on the same inputs, so the ratio is same-run. Weights are constants,
// as in a model. The aim (issue 35): loops within 3x of oneDNN.
//
//   build/bin/fallback_window_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true [--threads=N]
//   (one line)
//
// Counters: onednn_us and loops_us per run of the program, ratio =
// loops / oneDNN. --threads (default 1) is the artifacts' pool size.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pipeline/build.h"
#include "runtime/artifact.h"
#include "text/literals.h"
#include "text/parser.h"

namespace switchyard {
namespace {

int g_threads = 1;

using Dims = std::vector<int64_t>;

NDArray random_array(const Dims& shape, uint32_t seed) {
  NDArray a(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 0.1f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = dist(rng);
  return a;
}

// "1, 64, 56, 56"
std::string listed(const Dims& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

std::string tensor_type(const Dims& shape) { return "Tensor[(" + listed(shape) + "), float32]"; }

// @main(%x) = `body`, whose last line is the result.
std::string program(const Dims& input, const std::string& body) {
  return "def @main(%x: " + tensor_type(input) + ") {\n" + body + "\n}\n";
}

std::string weights(const Dims& shape) { return constant_text(random_array(shape, 7)); }

std::string convolution(const Dims& input, const Dims& weight, const std::string& attrs) {
  return program(input, "  nn.conv2d(%x, " + weights(weight) + attrs + ")");
}

// ONNX ConvTranspose as the importer writes it (frontend/onnx/
// converters_resample.cc): zeros inserted between the input's pixels, then
// a stride-1 convolution with the flipped kernel (a constant here, as the
// importer's folds to one).
std::string transposed_convolution(int64_t in, int64_t out, int64_t size, int64_t kernel, int64_t stride,
                                   int64_t pad) {
  const Dims x{1, in, size, size};
  int64_t spread = size * stride, inserted = (size - 1) * stride + 1, reach = kernel - 1;
  auto zeros = [](const Dims& shape) { return "broadcast_to(0f, shape=[" + listed(shape) + "])"; };
  std::string body =
      "  %0 = reshape(%x, newshape=[" + listed({1, in, size, 1, size, 1}) + "]);\n" +
      "  %1 = concatenate((%0, " + zeros({1, in, size, stride - 1, size, 1}) + "), axis=3);\n" +
      "  %2 = concatenate((%1, " + zeros({1, in, size, stride, size, stride - 1}) + "), axis=5);\n" +
      "  %3 = reshape(%2, newshape=[" + listed({1, in, spread, spread}) + "]);\n" +
      "  %4 = strided_slice(%3, begin=[0, 0], end=[" + listed({inserted, inserted}) + "], axes=[2, 3]);\n" +
      "  nn.conv2d(%4, " + weights({out, in, kernel, kernel}) + ", padding=[" + listed({reach - pad, reach - pad}) +
      "])";
  return program(x, body);
}

struct Row {
  std::string name;
  Dims input;
  std::string text;
};

std::vector<Row> rows() {
  const Dims x56{1, 64, 56, 56}, x28{1, 64, 28, 28}, dw{1, 144, 56, 56};
  return {
      {"conv3x3_64to64_56", x56, convolution(x56, {64, 64, 3, 3}, ", padding=[1, 1]")},
      {"conv1x1_256to64_56", {1, 256, 56, 56}, convolution({1, 256, 56, 56}, {64, 256, 1, 1}, "")},
      {"depthwise3x3_144_56_s1", dw, convolution(dw, {144, 1, 3, 3}, ", padding=[1, 1], groups=144")},
      {"depthwise3x3_144_56_s2", dw,
       convolution(dw, {144, 1, 3, 3}, ", strides=[2, 2], padding=[1, 1], groups=144")},
      {"grouped3x3_128_g32_28", {1, 128, 28, 28},
       convolution({1, 128, 28, 28}, {128, 4, 3, 3}, ", padding=[1, 1], groups=32")},
      {"dilated3x3_d2_64_28", x28, convolution(x28, {64, 64, 3, 3}, ", padding=[2, 2], dilation=[2, 2]")},
      {"max_pool3x3_s2_64_112", {1, 64, 112, 112},
       program({1, 64, 112, 112}, "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])")},
      {"max_pool3x3_s2_ceil_64_112", {1, 64, 112, 112},
       program({1, 64, 112, 112}, "  nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=True)")},
      {"avg_pool3x3_s1_p1_exclude_192_35", {1, 192, 35, 35},
       program({1, 192, 35, 35}, "  nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1])")},
      {"global_avg_pool_1280_7", {1, 1280, 7, 7}, program({1, 1280, 7, 7}, "  nn.global_avg_pool2d(%x)")},
      {"conv_transpose4x4_s2_64to32_28", x28, transposed_convolution(64, 32, 28, 4, 2, 1)},
  };
}

struct Compiled {
  std::shared_ptr<Artifact> artifact;
  int primitives = 0;
};

Compiled compile(const Row& row, const std::string& target) {
  bool loops = target != "cpu";
  std::string dir = std::filesystem::temp_directory_path() / ("sy_fallback_bench_" + row.name + (loops ? "_loops" : ""));
  BuildOptions options{.config = CompilationConfig::parse("cpu:0=" + target)};
  build_artifact(parse_module(row.text, row.name + ".sy"), options, dir);
  Compiled c;
  c.artifact = Artifact::load(dir, {.threads = g_threads});
  for (const ManifestKernel& kernel : c.artifact->manifest().kernels) c.primitives += kernel.primitive >= 0;
  return c;
}

double seconds_of(const Compiled& c, const std::vector<TensorView>& in, const std::vector<MutableTensorView>& out) {
  auto start = std::chrono::steady_clock::now();
  c.artifact->run_buffers(in, out, {.record_stats = false});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_Window(benchmark::State& state, const Row& row) {
  // Google Benchmark calls this once per repetition and more: compile once.
  static std::map<std::string, std::pair<Compiled, Compiled>> built;
  if (!built.count(row.name)) built[row.name] = {compile(row, "cpu"), compile(row, "cpu -libs=none")};
  const auto& [library, loops] = built[row.name];
  if (library.primitives == 0 || loops.primitives != 0) {
    state.SkipWithError("the oneDNN build runs no primitive, or the loop build runs one");
    return;
  }
  NDArray x = random_array(row.input, 1);
  const ManifestTensor& result = library.artifact->manifest().outputs.at(0);
  NDArray out(DType::kFloat32, result.shape);
  std::vector<TensorView> in{{x.data(), DType::kFloat32, x.shape()}};
  std::vector<MutableTensorView> outs{{out.data(), DType::kFloat32, out.shape()}};
  seconds_of(library, in, outs), seconds_of(loops, in, outs);  // warm: primitives made, pages touched
  double library_total = 0, loops_total = 0;
  for (auto _ : state) {
    double library_seconds = seconds_of(library, in, outs), loops_seconds = seconds_of(loops, in, outs);
    library_total += library_seconds;
    loops_total += loops_seconds;
    state.SetIterationTime(library_seconds + loops_seconds);
  }
  double runs = double(state.iterations());
  state.counters["onednn_us"] = library_total / runs * 1e6;
  state.counters["loops_us"] = loops_total / runs * 1e6;
  state.counters["ratio"] = loops_total / library_total;
}

}  // namespace
}  // namespace switchyard

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--threads=", 10) == 0) switchyard::g_threads = std::atoi(argv[i] + 10);
  static const std::vector<switchyard::Row> all = switchyard::rows();
  for (const switchyard::Row& row : all)
    benchmark::RegisterBenchmark(row.name.c_str(), switchyard::BM_Window, row)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(1);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
