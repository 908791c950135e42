// The buffers the primitive tests (and bench/) hand a primitive: random
// values in [-1, 1), dense row-major strides, workspace memory aligned to
// 64 bytes as artifacts give it; and the 3x3 convolution several run.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/primitive_spec.h"

namespace switchyard::testing {

inline std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> values(n);
  for (float& v : values) v = value(generator);
  return values;
}

inline std::vector<int64_t> dense(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

struct Workspace {
  explicit Workspace(size_t bytes) : storage(bytes + 64) {}
  void* get() {
    auto base = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<void*>((base + 63) / 64 * 64);
  }
  std::vector<unsigned char> storage;
};

// A convolution of `src` by OIHW `weights` into `dst`: stride 1, undilated,
// padded by half the filter all round (so a 3x3 keeps the size), reading
// kernel inputs src (0), weights (1) and bias (2, one per output channel).
inline PrimitiveSpec convolution_spec(const std::string& algorithm, const PrimitiveTensor& src,
                                      const PrimitiveTensor& weights, const PrimitiveTensor& dst) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kConvolution;
  s.algorithm = algorithm;
  s.src = src;
  s.weights = weights;
  s.bias = {{weights.dims[0]}, {1}};
  s.dst = dst;
  s.src_input = 0;
  s.weights_input = 1;
  s.bias_input = 2;
  s.strides = {1, 1};
  s.dilation = {0, 0};
  s.padding_l = s.padding_r = {weights.dims[2] / 2, weights.dims[3] / 2};
  return s;
}

// A 3x3 convolution of `activation` (N, C, H, W, with its strides and
// format) into the same shape, with packed weights.
inline PrimitiveSpec same_size_3x3_convolution(const std::string& algorithm, const PrimitiveTensor& activation) {
  const std::vector<int64_t> weights = {activation.dims[1], activation.dims[1], 3, 3};
  return convolution_spec(algorithm, activation, {weights, dense(weights)}, activation);
}

}  // namespace switchyard::testing
