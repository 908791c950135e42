// Every kind of primitive the runtime runs, executed from several threads at
// once on different inputs, each thread with its own workspace as each run
// of an artifact has: every result equals, bit for bit, that primitive's
// sequential result for the same input. A primitive that kept anything a
// call writes (a oneDNN scratchpad, a reorder's target, a transform or
// packing buffer) outside the workspace mixes the threads' data (issue 41).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "primitive_buffers.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/packed_matmul.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard::testing {
namespace concurrent_primitives_test {

using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

constexpr int kThreads = 8, kRunsPerThread = 8;

PrimitivePostOp eltwise(const char* algorithm) {
  PrimitivePostOp post;
  post.algorithm = algorithm;
  return post;
}

PrimitivePostOp sum_of(int input, const PrimitiveTensor& operand) {
  PrimitivePostOp post;
  post.kind = PrimitivePostOp::Kind::kSum;
  post.input = input;
  post.operand = operand;
  return post;
}

// A ResNet block's second 3x3 convolution (64 channels at 28x28, so that
// concurrent calls overlap in its work): src (0), weights (1), bias (2),
// then relu(conv + bias + residual (3)), activations `format`.
PrimitiveSpec convolution_with_residual(const std::string& algorithm, const std::string& format) {
  const Dims activation = {1, 64, 28, 28};
  PrimitiveSpec s = same_size_3x3_convolution(
      algorithm, format.empty() ? PrimitiveTensor{activation, dense(activation)}
                                : PrimitiveTensor{activation, dense(activation), format});
  s.any_weights_layout = s.any_activation_layout = true;
  s.post_ops = {sum_of(3, s.dst), eltwise("eltwise_relu")};
  return s;
}

// relu(x[rows, 96] @ w[96, 80] + bias) + residual: x (0), w (1), bias (2), residual (3).
PrimitiveSpec matmul(const std::string& algorithm, int64_t rows) {
  constexpr int64_t k = 96, n = 80;
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.algorithm = algorithm;
  s.src = {{rows, k}, dense({rows, k})};
  s.weights = {{k, n}, {1, k}};  // read transposed, as nn.dense stores them
  s.bias = {{1, n}, {n, 1}};
  s.dst = {{rows, n}, dense({rows, n})};
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.any_weights_layout = algorithm.empty();
  s.post_ops = {eltwise("eltwise_relu"), sum_of(3, s.dst)};
  return s;
}

// Dense activations into 8-channel blocks: the layout conversion PlanLayouts inserts.
PrimitiveSpec reorder() {
  const Dims dims = {2, 12, 9, 7};
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kReorder;
  s.src = {dims, dense(dims)};
  s.dst = {dims, dense(dims), "nChw8c"};
  return s;
}

PrimitiveSpec max_pool() {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kPooling;
  s.algorithm = "pooling_max";
  s.src = {{1, 16, 15, 15}, dense({1, 16, 15, 15}), "nhwc"};
  s.dst = {{1, 16, 8, 8}, dense({1, 16, 8, 8}), "nhwc"};
  s.strides = {2, 2};
  s.kernel = {3, 3};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {1, 1};
  return s;
}

struct Case {
  const char* name;
  PrimitiveSpec spec;
};

std::vector<Case> cases() {
  return {{"Winograd convolution with a residual", convolution_with_residual(kWinogradAlgorithm, "nhwc")},
          {"oneDNN convolution with a residual, reordering its activations",
           convolution_with_residual("convolution_direct", "")},
          {"oneDNN convolution with a residual, channels last", convolution_with_residual("convolution_direct", "nhwc")},
          {"oneDNN matmul with a residual", matmul("", 64)},
          {"packed matmul with a residual", matmul(kPackedMatmulAlgorithm, 64)},
          {"reorder into channel blocks", reorder()},
          {"max pool", max_pool()}};
}

// Every kernel input's layout, by index.
std::vector<PrimitiveTensor> input_tensors(const PrimitiveSpec& s) {
  std::vector<PrimitiveTensor> tensors(size_t(s.src_input) + 1);
  auto set = [&](int index, const PrimitiveTensor& tensor) {
    if (index < 0) return;
    if (size_t(index) >= tensors.size()) tensors.resize(size_t(index) + 1);
    tensors[size_t(index)] = tensor;
  };
  set(s.src_input, s.src);
  set(s.weights_input, s.weights);
  set(s.bias_input, s.bias);
  for (const PrimitivePostOp& post : s.post_ops) set(post.input, post.operand);
  return tensors;
}

size_t floats_of(const PrimitiveTensor& tensor) { return dnnl_tensor_bytes(tensor) / sizeof(float); }

// One primitive, its constant weights prepared once (as a load does), and a
// call on the inputs made from `seed` (the weights are the same for all).
struct Subject {
  DnnlPrimitive primitive;
  std::vector<PrimitiveTensor> tensors;
  Floats weights;
  std::shared_ptr<const PreparedWeights> prepared;

  Subject(const PrimitiveSpec& spec, int threads) : primitive(spec, threads), tensors(input_tensors(spec)) {
    if (spec.weights_input >= 0) {
      weights = random_values(floats_of(spec.weights), 7);
      prepared = primitive.prepare_weights(weights.data());
    }
  }

  std::vector<Floats> inputs(unsigned seed) const {
    std::vector<Floats> values;
    for (size_t i = 0; i < tensors.size(); ++i)
      values.push_back(int(i) == primitive.spec().weights_input ? weights
                                                                : random_values(floats_of(tensors[i]), seed * 31 + unsigned(i)));
    return values;
  }

  Floats run(const std::vector<Floats>& values, void* workspace) const {
    std::vector<const void*> pointers;
    for (const Floats& v : values) pointers.push_back(v.data());
    Floats result(floats_of(primitive.spec().dst), -1.0f);
    void* outputs[] = {result.data()};
    primitive.execute(pointers.data(), outputs, prepared.get(), nullptr, workspace);
    return result;
  }
};

bool bitwise_equal(const Floats& a, const Floats& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ConcurrentPrimitives, EachKindRunFromEightThreadsMatchesItsSequentialResultsBitForBit) {
  for (const Case& c : cases()) {
    for (int primitive_threads : {1, 2}) {
      SCOPED_TRACE(std::string(c.name) + ", made for " + std::to_string(primitive_threads) + " threads");
      Subject subject(c.spec, primitive_threads);
      std::vector<std::vector<Floats>> inputs;
      std::vector<Floats> expected;
      for (int t = 0; t < kThreads; ++t) {
        inputs.push_back(subject.inputs(unsigned(t + 1)));
        Workspace workspace(subject.primitive.workspace_bytes());
        expected.push_back(subject.run(inputs.back(), workspace.get()));
        // Different inputs give different results, so a thread reading another's data is seen.
        if (t > 0) {
          ASSERT_FALSE(bitwise_equal(expected[0], expected.back()));
        }
      }
      std::vector<int> mismatches(kThreads, 0);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          Workspace workspace(subject.primitive.workspace_bytes());
          for (int run = 0; run < kRunsPerThread; ++run)
            if (!bitwise_equal(subject.run(inputs[size_t(t)], workspace.get()), expected[size_t(t)]))
              ++mismatches[size_t(t)];
        });
      for (std::thread& thread : threads) thread.join();
      for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
    }
  }
}

}  // namespace concurrent_primitives_test
}  // namespace switchyard::testing
