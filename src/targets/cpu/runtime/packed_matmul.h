// A matrix product with constant weights, C = A·B (+ bias, post-ops), the
// weights packed once (by the compiler, into weights.bin) into panels of
// 24 columns (each k's 24 weights contiguous). oneDNN 2.6's GEMM on AVX2
// packs the weights again on every call; here a 4x24 register tile runs
// the whole K over a packed panel and applies the bias and post-ops before
// its one store.
// bench/packed_matmul_bench.cc: on the encoder's products 1.0-1.2x
// oneDNN's speed on one thread and 1.1-1.3x on two, 75-80% of the FMA
// peak on one.
//
// A and C are row-major (any row stride); B may have any strides. Work is
// split over blocks of rows and panels on the device's own thread pool (the
// one its generated loops run on), not on oneDNN's OpenMP threads, so the
// encoder's products and the loops between them share one set of threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/primitive_spec.h"
#include "runtime/thread_pool.h"

namespace switchyard {

// Why PackedMatmul cannot compute `spec`, or empty when it can.
std::string packed_matmul_refusal(const PrimitiveSpec& spec);

// Whether it should beat oneDNN here: on CPUs without AVX-512, and on any
// for products of a few rows (a batch-1 classifier or MLP), which stream
// their weights: oneDNN 2.6's AVX-512 GEMM takes 2.9x as long for 1x784 by
// 784x512 and 1.7x for 1x2048 by 2048x1000, and loses only from 16 rows
// (bench/packed_matmul_bench.cc; an AVX-512 Xeon, one thread).
bool packed_matmul_pays(const PrimitiveSpec& spec);

class PackedMatmul {
 public:
  enum class Isa { kBest, kGeneric };  // kGeneric: the plain x86-64 code, for tests
  // Throws RuntimeError with the refusal when the spec is not one it computes.
  explicit PackedMatmul(const PrimitiveSpec& spec, Isa isa = Isa::kBest);
  ~PackedMatmul();
  PackedMatmul(const PackedMatmul&) = delete;
  PackedMatmul& operator=(const PackedMatmul&) = delete;

  // Floats of the packed weights, and the packing of the spec's weights
  // (laid out by its strides) into `packed` (that many floats, 64-byte aligned).
  size_t packed_weights_size() const;
  void pack_weights(const float* weights, float* packed) const;
  // Floats of one panel, and panels [first, end) of the packing into `packed`
  // (the floats of those panels), reading `weights` at any byte alignment: a
  // weight is packed piece by piece straight from the mapped model file.
  size_t panel_size() const;
  void pack_panels(const void* weights, int64_t first, int64_t end, float* packed) const;
  // Runs on the kernel's buffers, in parallel through `parallel_for`; it
  // needs no workspace. The destination may be a residual input (computed
  // in place).
  void execute(const void* const* inputs, void* const* outputs, const float* packed_weights,
               const ParallelFor& parallel_for) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard
