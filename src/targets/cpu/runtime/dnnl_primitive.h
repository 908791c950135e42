// A oneDNN primitive made from its PrimitiveSpec when an artifact loads.
// oneDNN fixes how a primitive splits its work among threads when it is
// made, and Debian's oneDNN runs on OpenMP threads of its own, so a
// primitive is made for its device's thread count and every call sets
// OpenMP's count to it first. Constant weights are reordered into the layout
// the primitive chose once, by the compiler or at load time; scratchpads and reordered
// activations live in per-run workspace memory, so concurrent runs share
// nothing mutable.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/primitive_spec.h"
#include "targets/cpu/runtime/packed_matmul.h"

namespace switchyard {

// oneDNN generates the kernels of its GEMM (which its "gemm:jit"
// implementations call) when a process first multiplies with it: 14-25 ms
// inside a first run (ResNet-50's first Winograd product on AVX2, the
// encoder's first matmul). This makes them once per process, on the calling
// thread; a load runs it on a thread of its own beside the rest, and only
// for primitives that multiply with it (on AVX-512 ResNet-50's run on
// brgemm kernels, generated with the primitive).
void generate_onednn_gemm_kernels();

class DnnlPrimitive {
 public:
  // Throws RuntimeError saying what oneDNN refused (e.g. the post-ops).
  DnnlPrimitive(const PrimitiveSpec& spec, int threads);
  ~DnnlPrimitive();
  DnnlPrimitive(const DnnlPrimitive&) = delete;
  DnnlPrimitive& operator=(const DnnlPrimitive&) = delete;

  const PrimitiveSpec& spec() const;
  // Whether oneDNN runs it (or the Winograd convolution's products) with its
  // GEMM, whose kernels generate_onednn_gemm_kernels makes.
  bool multiplies_with_onednn_gemm() const;
  // Bytes of workspace one call needs (scratchpad, blocked activations,
  // computed weights in the primitive's layout).
  size_t workspace_bytes() const;
  // True when it runs only with weights from prepare_weights (constant
  // weights): the Winograd convolution's are transformed once.
  bool needs_prepared_weights() const;
  // The layout its prepared weights take (e.g. "winograd_f4x4_3x3 [36][64][64]",
  // or oneDNN's blocking as text), empty when it reads plain weights; and
  // their bytes. The compiler stores constant weights prepared in
  // weights.bin under this name.
  std::string prepared_weights_layout() const;
  size_t prepared_weights_bytes() const;
  // Writes the plain weights at `weights` (aligned to their element) in
  // that layout to `prepared` (prepared_weights_bytes(), 64-byte aligned).
  void prepare_weights_into(const void* weights, void* prepared) const;
  // Bytes of the prepared weights that prepare_weights_range writes a
  // multiple of (the last piece may be shorter), or 0 when they are
  // prepared whole only; and bytes [begin, end) of them into `prepared`,
  // reading `weights` at any alignment.
  size_t prepared_weights_granule() const;
  void prepare_weights_range(const void* weights, size_t begin, size_t end, void* prepared) const;
  // The plain weights at `weights` in the primitive's layout, or null when
  // it reads them as they are.
  std::shared_ptr<const PreparedWeights> prepare_weights(const void* weights) const;
  // Weights stored already prepared, `bytes` at `stored` in `layout`: read
  // where they lie (which must outlive the result) when that is this
  // primitive's layout, else reordered into it when both are oneDNN's.
  // Throws RuntimeError naming the layouts otherwise.
  std::shared_ptr<const PreparedWeights> adopt_prepared_weights(const void* stored, size_t bytes,
                                                                const std::string& layout) const;
  // Whether it runs a depthwise convolution on its result (a post-op), and
  // that convolution's weights at `weights` (plain {channels, 1, 1, k, k})
  // in the layout it reads, or null when it reads them as they are.
  bool fuses_depthwise() const;
  std::shared_ptr<const PreparedWeights> prepare_depthwise_weights(const void* weights) const;
  // oneDNN's name for the implementation it chose ("jit_1x1:avx512_core",
  // "ref_fused_convolution:..."); empty for the runtime's own kernels.
  const std::string& implementation() const;
  // Runs on the kernel's buffers. `weights` and `depthwise_weights` replace
  // those inputs when given; `workspace` holds workspace_bytes(), 64-byte aligned. The
  // runtime's own kernels that run on the device's threads (the packed
  // matmul) use `parallel_for`, or run serially without one; oneDNN's run on
  // its OpenMP threads.
  void execute(const void* const* inputs, void* const* outputs, const PreparedWeights* weights,
               const PreparedWeights* depthwise_weights, void* workspace, const ParallelFor& parallel_for = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Bytes of a buffer in the tensor's layout (blocked formats pad channels).
size_t dnnl_tensor_bytes(const PrimitiveTensor& tensor);
// Whether oneDNN runs its AVX-512 kernels on this CPU.
bool dnnl_uses_avx512();
// The instruction set oneDNN dispatches to in this process, as a number
// (dnnl::cpu_isa): the CPU's, or less under ONEDNN_MAX_CPU_ISA.
int dnnl_effective_isa();
// Whether oneDNN's jit kernels multiply 8-bit values exactly here. Without
// VNNI (AVX2, AVX-512 before Cascade Lake) they use vpmaddubsw, whose
// pairwise int16 sums saturate, and halve s8 sources' weights to avoid it:
// outputs off by far more than rounding. There an 8-bit convolution or
// matmul runs as two products that cannot saturate (int8_split_product.h),
// or, where oneDNN has no jit kernel for those, as its reference kernel
// (exact, and slow).
bool int8_jit_kernels_are_exact();
// The channel block of the blocked activation format oneDNN's fastest
// convolutions use on this CPU: 16 with AVX-512, else 8.
int dnnl_channel_block();

// Whether this machine's oneDNN makes the primitive, post-ops included: the
// compiler asks before fusing an epilogue into it.
bool dnnl_makes(const PrimitiveSpec& spec);
// oneDNN's name for the implementation it would run the primitive with
// ("brg:avx512_core", "gemm:jit"); empty when it makes none.
std::string dnnl_implementation(const PrimitiveSpec& spec);
// Whether an implementation's name is one of oneDNN's slow reference ones
// ("ref:any", "simple:any", "gemm:ref"): plain loops, 10-100x its jit kernels.
bool dnnl_is_reference_implementation(const std::string& implementation);

}  // namespace switchyard
