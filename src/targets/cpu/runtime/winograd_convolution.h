// Winograd convolution, F(4x4, 3x3): a 3x3 convolution of stride 1 computed
// on 6x6 input tiles as 36 independent matrix products (one per transformed
// tile element, channels by channels), 2.25x fewer multiplications than
// the direct form. oneDNN 2.6 has Winograd only for AVX-512, and its direct
// AVX2 kernels reach about half of the FMA peak, so on the ResNets' 3x3
// layers this runs 1.8-2.4x faster than oneDNN's direct convolution.
//
// It reads and writes blocked or channels-last activations (nChw8c,
// nChw16c or nhwc, channels a multiple of 8): each group of 8 channels at
// one pixel is one vector, so
// the tile transforms are vector arithmetic. The 36 products run as one
// batched oneDNN matmul (per band of tiles, in bands: WinogradSplit); the weights are transformed once, by the
// compiler into weights.bin (or at load for an older artifact). The relative error against the direct form is about 1e-5
// on random data (bench/winograd_bench.cc measures it with the speed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/primitive_spec.h"

namespace switchyard {

// Why WinogradConvolution cannot compute `spec` (given with the direct
// algorithm's geometry), or empty when it can.
std::string winograd_refusal(const PrimitiveSpec& spec);

// Whether it should beat oneDNN's direct convolution on this shape: with
// few tiles per image the 4x larger transformed weights are read for too
// little work (ResNet's 7x7 layers run 0.4-0.6x as fast as direct).
bool winograd_pays(const PrimitiveSpec& spec);

// How one call's threads share the work. In bands: each thread takes a
// run of tiles through all three phases (transform, products, transform
// back), so what one phase writes the next reads from the same core's
// cache, but every thread reads all of the transformed weights. Phase by
// phase: each phase splits its own way (the transforms by rows of tiles,
// the products as oneDNN splits them), so every thread reads its share of
// the weights but about half of what it reads was written by another core.
enum class WinogradSplit { kChosen, kBands, kPhases };

// The split kChosen takes for `tiles` tiles (all images') on `threads`.
WinogradSplit chosen_winograd_split(int64_t tiles, int64_t in_channels, int64_t out_channels, int threads);

class WinogradConvolution {
 public:
  // Throws RuntimeError with the refusal when the spec is not one it
  // computes. One thread always runs phase by phase.
  WinogradConvolution(const PrimitiveSpec& spec, int threads, WinogradSplit split = WinogradSplit::kChosen);
  ~WinogradConvolution();
  WinogradConvolution(const WinogradConvolution&) = delete;
  WinogradConvolution& operator=(const WinogradConvolution&) = delete;

  // Floats of the transformed weights, and the transform of plain OIHW
  // weights into `transformed` (that many floats).
  size_t transformed_weights_size() const;
  void transform_weights(const float* weights, float* transformed) const;
  // oneDNN's implementation of the 36 products (e.g. "brg:avx512_core",
  // "gemm:jit").
  const std::string& products_implementation() const;
  WinogradSplit split() const;
  // Bytes of workspace one call needs: the transformed tiles, the products
  // and their matmul's scratchpad, so concurrent calls share nothing they write.
  size_t workspace_bytes() const;
  // Runs on the kernel's buffers; `workspace` holds workspace_bytes(),
  // 64-byte aligned.
  void execute(const void* const* inputs, void* const* outputs, const float* transformed_weights,
               void* workspace) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard
