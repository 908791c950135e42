// An 8-bit convolution or matmul computed exactly with oneDNN's fast
// kernels on CPUs without VNNI. There oneDNN multiplies u8 by s8 with
// vpmaddubsw, which adds two products into int16 and saturates: 255 * 127 * 2
// does not fit, 255 * 64 * 2 does. So each constant weight is split as
// w = 2 * h + l with h = w >> 1 in [-64, 63] and l = w & 1, and two int32
// products run, A = sum((x - zx) * h) and B = sum((x - zx) * l), neither of
// which can saturate. A pass over the result then takes 2 * A + B (exact in
// int32) through the primitive's epilogue in the order oneDNN's own int8
// kernels apply it: float, plus bias, times the output scale, the element-wise
// post-ops, plus the destination's zero point, rounded half to even and
// saturated. An s8 source is made u8 first (x + 128, and its zero point with
// it), since oneDNN halves the weights of s8 sources on these CPUs. Weights
// that all fit 7 bits (a reduce_range quantization's) cannot saturate and
// run as one product, chosen when they are prepared.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/primitive_spec.h"
#include "runtime/thread_pool.h"

namespace switchyard {

class Int8SplitProduct {
 public:
  // The split form of `spec` (a quantized convolution or matmul), or null
  // when it does not apply: post-ops other than ReLU, or oneDNN running
  // either product with its reference kernel anyway. Throws dnnl::error
  // where oneDNN refuses the products.
  static std::unique_ptr<Int8SplitProduct> make(const PrimitiveSpec& spec, int threads);
  ~Int8SplitProduct();
  Int8SplitProduct(const Int8SplitProduct&) = delete;
  Int8SplitProduct& operator=(const Int8SplitProduct&) = delete;

  // "int8_split:" and oneDNN's name for the products' implementation.
  const std::string& implementation() const;
  // oneDNN's name for the products' implementation alone ("gemm:jit").
  const std::string& products_implementation() const;
  // Bytes of the split weights, both halves in the layouts their products
  // read, and the split of plain s8 weights into `prepared` (that many
  // bytes, 64-byte aligned).
  size_t prepared_weights_bytes() const;
  void prepare_weights(const void* weights, void* prepared) const;
  // Bytes of workspace one call needs: the scratchpad, the source made u8
  // or laid out, both int32 products and the result before its reorder.
  size_t workspace_bytes() const;
  // Runs on the kernel's buffers with weights from prepare_weights; the
  // epilogue's pass runs on `parallel_for`.
  void execute(const void* const* inputs, void* const* outputs, const void* prepared_weights, void* workspace,
               const ParallelFor& parallel_for) const;

 private:
  struct Impl;
  explicit Int8SplitProduct(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard
