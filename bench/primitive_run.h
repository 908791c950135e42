// What the primitive micro-benchmarks share: random inputs, and one
// primitive made, its weights prepared and its workspace aligned as an
// artifact does, run on a pool of the primitive's thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cpp/runtime/primitive_buffers.h"  // shared with the primitive tests
#include "runtime/thread_pool.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {

using testing::random_values;
using testing::same_size_3x3_convolution;

// Inputs are (source, weights, bias).
struct PrimitiveRun {
  PrimitiveRun(const PrimitiveSpec& spec, int threads, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& b)
      : primitive(spec, threads), weights(primitive.prepare_weights(w.data())),
        workspace(primitive.workspace_bytes()), out(size_t(dnnl_tensor_bytes(spec.dst) / sizeof(float))),
        inputs{x.data(), w.data(), b.data()}, pool(threads) {}
  void operator()() {
    void* outputs[] = {out.data()};
    // oneDNN's primitives run on its OpenMP threads, the runtime's own on the pool.
    primitive.execute(inputs, outputs, weights.get(), nullptr, workspace.get(),
                      [this](int64_t n, int64_t grain, const ParallelBody& body) { pool.parallel_for(n, grain, body); });
  }
  DnnlPrimitive primitive;
  std::shared_ptr<const PreparedWeights> weights;
  testing::Workspace workspace;
  std::vector<float> out;
  const void* inputs[3];
  ThreadPool pool;
};

}  // namespace switchyard
