// The CUDA library path (cuBLASLt, cuDNN): which specs it takes, decided
// from the spec alone (here and in CI), the errors of a library that cannot
// be loaded, and, on a GPU (scripts/gpu-check.sh), each supported spec run on
// cuda:0 against a reference computed here on the host from the same spec.
#include "targets/cuda/runtime/cuda_library_primitive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cuda/runtime/cuda_driver.h"
#include "targets/cuda/runtime/cuda_library_loader.h"

namespace switchyard::testing {
namespace cuda_library_primitive_test {

using Dims = std::vector<int64_t>;

PrimitiveTensor plain(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return {dims, strides};
}

PrimitivePostOp relu() { return {PrimitivePostOp::Kind::kEltwise, "eltwise_relu", 0, 0, -1, {}}; }
PrimitivePostOp sum(const PrimitiveSpec& s, int input) { return {PrimitivePostOp::Kind::kSum, "", 0, 0, input, s.dst}; }

// Kernel inputs: 0 src, 1 weights, 2 bias, 3 a residual.
PrimitiveSpec with_bias(PrimitiveSpec s, const Dims& dims) {
  s.bias = plain(dims);
  s.bias_input = 2;
  return s;
}

// nn.dense as the compiler writes it: weights [n, k] read transposed.
PrimitiveSpec dense(int64_t m, int64_t k, int64_t n) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.src = plain({m, k});
  s.weights = {{k, n}, {1, k}};
  s.dst = plain({m, n});
  s.weights_input = 1;
  return s;
}

PrimitiveSpec batch_matmul(int64_t b, int64_t m, int64_t k, int64_t n, bool transpose_a, bool transpose_b) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.src = {{b, m, k}, transpose_a ? Dims{m * k, 1, m} : Dims{m * k, k, 1}};
  s.weights = {{b, k, n}, transpose_b ? Dims{k * n, 1, k} : Dims{k * n, n, 1}};
  s.dst = plain({b, m, n});
  s.weights_input = 1;
  return s;
}

PrimitiveSpec matmul(const Dims& a, const Dims& b, const Dims& out) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.src = plain(a);
  s.weights = plain(b);
  s.dst = plain(out);
  s.weights_input = 1;
  return s;
}

int64_t extent(int64_t in, int64_t window, int64_t stride, int64_t dilation, int64_t left, int64_t right) {
  return (in + left + right - ((window - 1) * (dilation + 1) + 1)) / stride + 1;
}

// nn.conv2d as the compiler writes it; weights [O, I/G, R, S], grouped as [G, O/G, I/G, R, S].
PrimitiveSpec conv(const Dims& src, int64_t outputs, int64_t window, int64_t stride, int64_t dilation, int64_t left,
                   int64_t right, int64_t groups = 1) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kConvolution;
  s.algorithm = "convolution_direct";
  s.src = plain(src);
  int64_t per_group = src[1] / groups;
  s.weights = plain(groups == 1 ? Dims{outputs, per_group, window, window}
                                : Dims{groups, outputs / groups, per_group, window, window});
  s.weights_input = 1;
  int64_t h = extent(src[2], window, stride, dilation, left, right);
  int64_t w = extent(src[3], window, stride, dilation, left, right);
  s.dst = plain({src[0], outputs, h, w});
  s.strides = {stride, stride};
  s.dilation = {dilation, dilation};
  s.padding_l = {left, left};
  s.padding_r = {right, right};
  s.any_weights_layout = s.any_activation_layout = true;  // as for oneDNN: the CUDA path reads both plain
  return s;
}

PrimitiveSpec pool(const std::string& algorithm, const Dims& src, int64_t window, int64_t stride, int64_t left,
                   int64_t right) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kPooling;
  s.algorithm = algorithm;
  s.src = plain(src);
  s.dst = plain(
      {src[0], src[1], extent(src[2], window, stride, 0, left, right), extent(src[3], window, stride, 0, left, right)});
  s.strides = {stride, stride};
  s.kernel = {window, window};
  s.dilation = {0, 0};
  s.padding_l = {left, left};
  s.padding_r = {right, right};
  return s;
}

struct Case {
  std::string name;
  PrimitiveSpec spec;
  bool residual_in_output = false;  // the residual is the output's own buffer
};

// Every kind of spec the CUDA path runs.
std::vector<Case> supported() {
  std::vector<Case> cases;
  cases.push_back({"dense", dense(5, 7, 3)});
  cases.push_back({"dense+bias", with_bias(dense(5, 7, 3), {1, 3})});
  PrimitiveSpec dense_relu = dense(6, 9, 4);
  dense_relu.post_ops = {relu()};
  cases.push_back({"dense+relu", dense_relu});
  PrimitiveSpec dense_bias_relu = with_bias(dense(33, 17, 20), {1, 20});
  dense_bias_relu.post_ops = {relu()};
  cases.push_back({"dense+bias+relu", dense_bias_relu});
  PrimitiveSpec dense_sum = with_bias(dense(8, 5, 6), {1, 6});
  dense_sum.post_ops = {sum(dense_sum, 3)};
  cases.push_back({"dense+bias+sum", dense_sum});
  cases.push_back({"batch_matmul", batch_matmul(4, 5, 6, 3, false, false)});
  cases.push_back({"batch_matmul transpose_a", batch_matmul(3, 5, 7, 2, true, false)});
  cases.push_back({"batch_matmul transpose_b", batch_matmul(2, 4, 8, 6, false, true)});
  cases.push_back({"batch_matmul both transposed", batch_matmul(2, 3, 5, 4, true, true)});
  cases.push_back({"matmul over broadcast weights", matmul({2, 3, 5, 6}, {1, 1, 6, 4}, {2, 3, 5, 4})});
  cases.push_back({"conv", conv({1, 3, 8, 8}, 4, 3, 1, 0, 1, 1)});
  cases.push_back({"conv+bias", with_bias(conv({2, 3, 7, 6}, 5, 3, 1, 0, 1, 1), {5})});
  PrimitiveSpec conv_bias_relu = with_bias(conv({1, 4, 9, 9}, 8, 3, 1, 0, 1, 1), {8});
  conv_bias_relu.post_ops = {relu()};
  cases.push_back({"conv+bias+relu", conv_bias_relu});
  PrimitiveSpec conv_bias_sum_relu = with_bias(conv({2, 3, 6, 6}, 4, 3, 1, 0, 1, 1), {4});
  conv_bias_sum_relu.post_ops = {sum(conv_bias_sum_relu, 3), relu()};
  cases.push_back({"conv+bias+sum+relu", conv_bias_sum_relu});
  PrimitiveSpec conv_bias_sum = with_bias(conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1), {4});
  conv_bias_sum.post_ops = {sum(conv_bias_sum, 3)};
  cases.push_back({"conv+bias+sum", conv_bias_sum});
  PrimitiveSpec conv_sum = conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1);
  conv_sum.post_ops = {sum(conv_sum, 3)};
  cases.push_back({"conv+sum", conv_sum});
  cases.push_back({"conv+sum into the residual's buffer", conv_sum, true});
  PrimitiveSpec conv_relu = conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1);
  conv_relu.post_ops = {relu()};
  cases.push_back({"conv+relu", conv_relu});
  cases.push_back({"conv strided, padded, dilated", conv({1, 3, 11, 11}, 4, 3, 2, 1, 2, 2)});
  cases.push_back({"conv grouped", conv({2, 4, 7, 7}, 6, 3, 1, 0, 1, 1, 2)});
  cases.push_back({"conv depthwise", with_bias(conv({1, 4, 6, 6}, 4, 3, 1, 0, 1, 1, 4), {4})});
  // Right padding the windows never reach: cuDNN's symmetric padding computes the same.
  PrimitiveSpec lopsided = conv({1, 2, 8, 8}, 3, 3, 2, 0, 1, 1);
  lopsided.padding_r = {0, 0};
  cases.push_back({"conv with padding on the left only", lopsided});
  cases.push_back({"max pool", pool("pooling_max", {1, 3, 8, 8}, 2, 2, 0, 0)});
  cases.push_back({"max pool padded", pool("pooling_max", {2, 3, 9, 9}, 3, 2, 1, 1)});
  cases.push_back({"avg pool", pool("pooling_avg_exclude_padding", {1, 2, 8, 8}, 2, 2, 0, 0)});
  cases.push_back(
      {"avg pool padded, padding not counted", pool("pooling_avg_exclude_padding", {1, 2, 7, 7}, 3, 2, 1, 1)});
  cases.push_back({"avg pool padded, padding counted", pool("pooling_avg_include_padding", {1, 2, 7, 7}, 3, 2, 1, 1)});
  cases.push_back({"global avg pool", pool("pooling_avg_exclude_padding", {2, 5, 7, 7}, 7, 1, 0, 0)});
  return cases;
}

TEST(CudaLibrary, TakesEverySupportedSpecFromTheSpecAlone) {
  for (const Case& c : supported()) {
    EXPECT_EQ(cuda_library_refusal(c.spec), "") << c.name;
    EXPECT_TRUE(cuda_library_makes(c.spec)) << c.name;
  }
}

void expect_refused(const PrimitiveSpec& spec, const std::string& reason) {
  std::string why = cuda_library_refusal(spec);
  EXPECT_NE(why.find(reason), std::string::npos) << "refusal: '" << why << "'\nexpected: '" << reason << "'";
  EXPECT_FALSE(cuda_library_makes(spec));
}

TEST(CudaLibrary, RunsAConvolutionWhateverAlgorithmTheCpuChose) {
  PrimitiveSpec winograd = conv({1, 8, 8, 8}, 8, 3, 1, 0, 1, 1);
  winograd.algorithm = "convolution_winograd";
  EXPECT_EQ(cuda_library_refusal(winograd), "");
  winograd.algorithm = "convolution_auto";
  expect_refused(winograd, "cuDNN has no convolution algorithm 'convolution_auto'");
}

TEST(CudaLibrary, RefusesBlockedLayoutsNamingTheTensor) {
  PrimitiveSpec blocked = conv({1, 16, 8, 8}, 16, 3, 1, 0, 1, 1);
  blocked.src.format = "nChw8c";
  expect_refused(blocked, "the blocked layout nChw8c of src: cuDNN reads plain layouts only");
  PrimitiveSpec blocked_pool = pool("pooling_max", {1, 16, 8, 8}, 2, 2, 0, 0);
  blocked_pool.dst.format = "nChw16c";
  expect_refused(blocked_pool, "the blocked layout nChw16c of dst: cuDNN reads plain layouts only");
}

TEST(CudaLibrary, RefusesPostOpsItHasNoEpilogueForSoTheyStayAKernel) {
  PrimitiveSpec gelu = with_bias(dense(4, 8, 4), {1, 4});
  gelu.post_ops = {{PrimitivePostOp::Kind::kEltwise, "eltwise_gelu_erf", 0, 0, -1, {}}};
  expect_refused(gelu, "cuBLASLt has no epilogue for post-op 0 (eltwise_gelu_erf(alpha 0.000000)) of 1");
  expect_refused(gelu, "its GELU is the tanh approximation, not erf's");
  PrimitiveSpec leaky = dense(4, 8, 4);
  leaky.post_ops = {{PrimitivePostOp::Kind::kEltwise, "eltwise_relu", 0.1f, 0, -1, {}}};
  expect_refused(leaky, "cuBLASLt has no epilogue for post-op 0 (eltwise_relu(alpha 0.100000))");
  PrimitiveSpec binary = dense(4, 8, 4);
  binary.post_ops = {{PrimitivePostOp::Kind::kBinary, "binary_mul", 0, 0, 2, plain({1, 4})}};
  expect_refused(binary, "cuBLASLt has no epilogue for post-op 0 (binary_mul)");
  PrimitiveSpec sum_relu = dense(4, 8, 4);
  sum_relu.post_ops = {sum(sum_relu, 2), relu()};
  expect_refused(sum_relu,
                 "cuBLASLt has no epilogue for post-op 1 (eltwise_relu(alpha 0.000000)) of 2: it fuses "
                 "a residual sum, or a ReLU");
  PrimitiveSpec relu_sum = conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1);
  relu_sum.post_ops = {relu(), sum(relu_sum, 3)};
  expect_refused(relu_sum,
                 "cuDNN has no epilogue for post-op 0 (eltwise_relu(alpha 0.000000)) of 2: it fuses a "
                 "residual sum first, then a ReLU");
  PrimitiveSpec twice = conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1);
  twice.post_ops = {sum(twice, 3), sum(twice, 3)};
  expect_refused(twice, "cuDNN has no epilogue for post-op 1 (sum) of 2");
  PrimitiveSpec odd_residual = conv({1, 3, 6, 6}, 4, 3, 1, 0, 1, 1);
  odd_residual.post_ops = {sum(odd_residual, 3)};
  odd_residual.post_ops[0].operand.strides = {144, 1, 24, 4};
  expect_refused(odd_residual, "cuDNN adds a residual laid out as the destination only");
  PrimitiveSpec pool_relu = pool("pooling_max", {1, 3, 8, 8}, 2, 2, 0, 0);
  pool_relu.post_ops = {relu()};
  expect_refused(pool_relu, "cuDNN's pools take no weights, bias or post-ops");
}

TEST(CudaLibrary, RefusesGeometryTheLibrariesCannotExpress) {
  // ceil_mode's extra right padding: cuDNN pads both sides by the left's.
  PrimitiveSpec ceil_pool = pool("pooling_max", {1, 2, 8, 8}, 3, 2, 0, 1);
  expect_refused(ceil_pool, "padding [0,0] before and [1,1] after: cuDNN pads both sides alike");
  PrimitiveSpec counted = pool("pooling_avg_include_padding", {1, 2, 8, 8}, 2, 2, 1, 1);
  counted.padding_r = {0, 0};
  counted.dst.dims = {1, 2, 4, 4};
  counted.dst.strides = plain(counted.dst.dims).strides;
  expect_refused(counted, "padding [1,1] before and [0,0] after: cuDNN pads both sides alike");
  PrimitiveSpec dilated_pool = pool("pooling_max", {1, 2, 8, 8}, 2, 2, 0, 0);
  dilated_pool.dilation = {1, 1};
  dilated_pool.dst = plain({1, 2, 3, 3});
  expect_refused(dilated_pool, "a pool dilated by [1,1]: cuDNN's pools have no dilation");
  PrimitiveSpec wrong_extent = conv({1, 3, 8, 8}, 4, 3, 1, 0, 1, 1);
  wrong_extent.dst = plain({1, 4, 7, 8});
  expect_refused(wrong_extent,
                 "a convolution window [3,3] strides [1,1] padding [1,1][1,1] does not map "
                 "[1,3,8,8] onto [1,4,7,8]");
  PrimitiveSpec strided_weights = conv({1, 3, 8, 8}, 4, 3, 1, 0, 1, 1);
  strided_weights.weights.strides = {1, 4, 36, 12};
  expect_refused(strided_weights, "cuDNN reads packed filters only");
  PrimitiveSpec volume = conv({1, 3, 8, 8}, 4, 3, 1, 0, 1, 1);
  volume.src = plain({1, 3, 8, 8, 8});
  expect_refused(volume, "the CUDA path runs 2-d windows over NCHW");
  // numpy broadcasting that no single batch stride expresses.
  expect_refused(matmul({2, 1, 5, 6}, {1, 3, 6, 4}, {2, 3, 5, 4}),
                 "the matmul's weights [1,3,6,4] with strides [72,24,4,1]: cuBLASLt reads matrices with one unit "
                 "stride, in batches of one stride");
  PrimitiveSpec scattered = dense(4, 8, 4);
  scattered.src.strides = {16, 2};
  expect_refused(scattered, "the matmul's src [4,8] with strides [16,2]");
  PrimitiveSpec wide_bias = with_bias(dense(4, 8, 4), {4, 4});
  expect_refused(wide_bias,
                 "the matmul's bias [4,4] with strides [4,1]: cuBLASLt adds one packed vector of the 4 "
                 "output columns");
  PrimitiveSpec not_a_product = dense(4, 8, 4);
  not_a_product.dst = plain({4, 5});
  expect_refused(not_a_product, "a matmul of [4,8] by [8,4] into [4,5]");
}

// A library that cannot be loaded, or lacks an entry point, is an error
// naming the GPU that asked and the library.
TEST(CudaLibrary, AMissingLibraryNamesTheGpuAndTheLibrary) {
  CudaLibraryLoad missing("cuBLASLt", "libcublasLt-not-here.so.13");
  void (*create)() = nullptr;
  missing.resolve(create, "cublasLtCreate");
  EXPECT_EQ(create, nullptr);
  try {
    missing.require("cuda:0");
    FAIL() << "a missing library was usable";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cuda:0: cuBLASLt cannot be used: it is not installed "
                                          "(libcublasLt-not-here.so.13: cannot open shared object file",
                                          0),
              0u)
        << e.what();
  }
  CudaLibraryLoad wrong("cuDNN", "libm.so.6");
  double (*cosine)(double) = nullptr;
  void (*create_dnn)() = nullptr;
  wrong.resolve(cosine, "cos");
  EXPECT_NE(cosine, nullptr);
  wrong.require("cuda:1");  // everything asked for so far is there
  wrong.resolve(create_dnn, "cudnnCreate");
  try {
    wrong.require("cuda:1");
    FAIL() << "a library without cudnnCreate was usable";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "cuda:1: cuDNN cannot be used: libm.so.6 has no cudnnCreate (an older cuDNN?)");
  }
}

// Where cuBLASLt and cuDNN are installed (this machine: the toolkit's), every
// entry point a primitive calls is found by name; where they are not (CI), or
// the runtime was built without a toolkit, asking names cuda:0 and the library.
TEST(CudaLibrary, AnInstalledLibraryHasEveryEntryPointAPrimitiveCalls) {
  std::string skipped;
  for (PrimitiveKind kind : {PrimitiveKind::kMatmul, PrimitiveKind::kConvolution}) {
    std::string library = cuda_library_name(kind);
    try {
      require_cuda_library(kind, "cuda:0");
    } catch (const RuntimeError& e) {
      std::string what = e.what();
      bool absent = what.rfind("cuda:0: " + library + " cannot be used: it is not installed (", 0) == 0 ||
                    (what.rfind("cuda:0: the ", 0) == 0 &&
                     what.find(" cannot run with " + library + ": this Switchyard was built without a CUDA toolkit") !=
                         std::string::npos);
      EXPECT_TRUE(absent) << what;
      skipped += what + "\n";
    }
  }
  if (!skipped.empty()) GTEST_SKIP() << skipped;
}

// ---- On cuda:0 ----

size_t elements(const PrimitiveTensor& t) {
  size_t last = 0;
  for (size_t d = 0; d < t.dims.size(); ++d) last += size_t((t.dims[d] - 1) * t.strides[d]);
  return last + 1;
}

// Element `index` (the dims' row-major position) of `t`, read through its strides.
size_t offset(const PrimitiveTensor& t, const Dims& index) {
  size_t at = 0;
  for (size_t d = 0; d < index.size(); ++d) at += size_t((t.dims[d] == 1 ? 0 : index[d]) * t.strides[d]);
  return at;
}

bool next(Dims& index, const Dims& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// The spec's meaning, on the host: buffers[i] is kernel input i.
std::vector<float> reference(const PrimitiveSpec& s, const std::vector<std::vector<float>>& in) {
  std::vector<float> out(elements(s.dst), 0);
  const Dims& dims = s.dst.dims;
  Dims index(dims.size(), 0);
  do {
    double value = 0;
    if (s.kind == PrimitiveKind::kMatmul) {
      size_t r = dims.size();
      for (int64_t k = 0; k < s.src.dims[r - 1]; ++k) {
        Dims a = index, b = index;
        a[r - 1] = k;
        b[r - 2] = k;
        value += double(in[0][offset(s.src, a)]) * in[1][offset(s.weights, b)];
      }
      if (!s.bias.empty()) value += in[2][size_t(index[r - 1])];
    } else {
      int64_t n = index[0], c = index[1], y = index[2], x = index[3];
      bool convolution = s.kind == PrimitiveKind::kConvolution;
      bool grouped = convolution && s.weights.dims.size() == 5;
      int64_t window_h = convolution ? s.weights.dims[grouped ? 3 : 2] : s.kernel[0];
      int64_t window_w = convolution ? s.weights.dims[grouped ? 4 : 3] : s.kernel[1];
      int64_t per_group = convolution ? s.weights.dims[grouped ? 2 : 1] : 1;
      int64_t outputs_per_group = grouped ? s.weights.dims[1] : s.dst.dims[1];
      int64_t in_h = s.src.dims[2], in_w = s.src.dims[3];
      double best = -INFINITY;
      int64_t counted = 0, padded = 0;
      for (int64_t i = 0; i < window_h; ++i)
        for (int64_t j = 0; j < window_w; ++j) {
          int64_t h = y * s.strides[0] - s.padding_l[0] + i * (s.dilation[0] + 1);
          int64_t w = x * s.strides[1] - s.padding_l[1] + j * (s.dilation[1] + 1);
          if (h >= -s.padding_l[0] && h < in_h + s.padding_r[0] && w >= -s.padding_l[1] && w < in_w + s.padding_r[1])
            ++padded;
          if (h < 0 || h >= in_h || w < 0 || w >= in_w) continue;
          ++counted;
          if (!convolution) {
            float v = in[0][offset(s.src, {n, c, h, w})];
            value += v;
            best = std::max(best, double(v));
            continue;
          }
          int64_t group = c / outputs_per_group;
          for (int64_t ci = 0; ci < per_group; ++ci) {
            size_t w_at = grouped ? offset(s.weights, {group, c % outputs_per_group, ci, i, j})
                                  : offset(s.weights, {c, ci, i, j});
            value += double(in[0][offset(s.src, {n, group * per_group + ci, h, w})]) * in[1][w_at];
          }
        }
      if (s.algorithm == "pooling_max") value = best;
      if (s.algorithm == "pooling_avg_exclude_padding") value /= double(counted);
      if (s.algorithm == "pooling_avg_include_padding") value /= double(padded);
      if (!s.bias.empty()) value += in[2][size_t(c)];
    }
    for (const PrimitivePostOp& post : s.post_ops)
      value = post.kind == PrimitivePostOp::Kind::kSum ? value + in[size_t(post.input)][offset(s.dst, index)]
                                                       : std::max(value, 0.0);
    out[offset(s.dst, index)] = float(value);
  } while (next(index, dims));
  return out;
}

std::vector<std::vector<float>> random_buffers(const PrimitiveSpec& s, std::mt19937& random) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<std::vector<float>> buffers;
  for (const PrimitiveTensor* t : {&s.src, &s.weights, &s.bias, &s.dst}) {
    buffers.emplace_back(t->empty() ? 0 : elements(*t));
    for (float& v : buffers.back()) v = uniform(random);
  }
  return buffers;
}

bool close(float got, float expected) {
  return std::fabs(got - expected) <= 1e-4f * std::max(1.0f, std::fabs(expected));
}

// The reference is what oneDNN computes for the same spec on the CPU, so the
// GPU test below compares with the CPU's meaning of each spec.
TEST(CudaLibrary, TheHostReferenceIsOneDnnsMeaningOfEachSpec) {
  std::mt19937 random(5);
  for (const Case& c : supported()) {
    SCOPED_TRACE(c.name);
    std::vector<std::vector<float>> host = random_buffers(c.spec, random);
    std::vector<float> expected = reference(c.spec, host);
    DnnlPrimitive primitive(c.spec, 1);
    std::vector<float> workspace(primitive.workspace_bytes() / sizeof(float) + 16);
    void* aligned = workspace.data() + (16 - reinterpret_cast<uintptr_t>(workspace.data()) / 4 % 16) % 16;
    std::vector<float> out = c.residual_in_output ? host[3] : std::vector<float>(expected.size());
    std::vector<const void*> inputs;
    for (const std::vector<float>& buffer : host) inputs.push_back(buffer.data());
    if (c.residual_in_output) inputs[3] = out.data();
    void* outputs[] = {out.data()};
    primitive.execute(inputs.data(), outputs, nullptr, nullptr, aligned);
    size_t wrong = 0;
    for (size_t i = 0; i < out.size(); ++i)
      if (!close(out[i], expected[i]) && wrong++ < 5)
        ADD_FAILURE() << "element " << i << ": oneDNN " << out[i] << ", reference " << expected[i];
    EXPECT_EQ(wrong, 0u);
  }
}

std::unique_ptr<CudaGpu> open_gpu_or_skip(std::string& why) {
  try {
    return CudaGpu::open(0);
  } catch (const RuntimeError& e) {
    why = e.what();
    return nullptr;
  }
}

// Each supported spec on cuda:0 gives the host reference, within 1e-4
// relative. Here it skips, saying why; SY_REQUIRE_GPU=1 makes that a failure.
TEST(CudaLibrary, EverySupportedSpecMatchesTheHostReferenceOnCuda0) {
  std::string why;
  std::unique_ptr<CudaGpu> gpu = open_gpu_or_skip(why);
  if (!gpu) {
    if (getenv("SY_REQUIRE_GPU")) FAIL() << why;
    GTEST_SKIP() << "no GPU: " << why;
  }
  std::mt19937 random(11);
  for (const Case& c : supported()) {
    SCOPED_TRACE(c.name);
    const PrimitiveSpec& s = c.spec;
    CudaLibraryPrimitive primitive(s, *gpu);
    EXPECT_EQ(primitive.prepare_weights(nullptr), nullptr);
    std::vector<std::vector<float>> host = random_buffers(s, random);
    std::vector<uint64_t> device(4, 0);
    for (size_t i = 0; i < 4; ++i) {
      if (host[i].empty()) continue;
      device[i] = gpu->allocate(host[i].size() * sizeof(float));
      gpu->copy_to_gpu(device[i], host[i].data(), host[i].size() * sizeof(float));
    }
    std::vector<float> expected = reference(s, host);
    uint64_t output = c.residual_in_output ? device[3] : gpu->allocate(expected.size() * sizeof(float));
    uint64_t workspace = gpu->allocate(primitive.workspace_bytes() + 256);
    std::vector<const void*> inputs;
    for (uint64_t d : device) inputs.push_back(reinterpret_cast<const void*>(d));
    void* outputs[] = {reinterpret_cast<void*>(output)};
    primitive.execute(inputs.data(), outputs, nullptr, reinterpret_cast<void*>(workspace), nullptr);
    gpu->synchronize();
    std::vector<float> got(expected.size());
    gpu->copy_to_host(got.data(), output, got.size() * sizeof(float));
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!close(got[i], expected[i]) && wrong++ < 5)
        ADD_FAILURE() << "element " << i << ": " << got[i] << ", expected " << expected[i];
    EXPECT_EQ(wrong, 0u);
    for (uint64_t d : device)
      if (d) gpu->release(d);
    if (!c.residual_in_output) gpu->release(output);
    gpu->release(workspace);
  }
}

// On a GPU, making a refused spec is an error naming the GPU, the primitive
// and the reason cuda_library_refusal gives.
TEST(CudaLibrary, MakingARefusedSpecOnCuda0NamesTheGpuAndTheReason) {
  std::string why;
  std::unique_ptr<CudaGpu> gpu = open_gpu_or_skip(why);
  if (!gpu) {
    if (getenv("SY_REQUIRE_GPU")) FAIL() << why;
    GTEST_SKIP() << "no GPU: " << why;
  }
  PrimitiveSpec blocked = conv({1, 16, 8, 8}, 16, 3, 1, 0, 1, 1);
  blocked.src.format = "nChw8c";
  try {
    CudaLibraryPrimitive primitive(blocked, *gpu);
    FAIL() << "made a primitive of a blocked layout";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 ("cuda:0: the convolution primitive cannot run with cuDNN: " + cuda_library_refusal(blocked)).c_str());
  }
}

}  // namespace cuda_library_primitive_test
}  // namespace switchyard::testing
