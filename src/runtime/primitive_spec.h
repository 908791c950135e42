// A oneDNN primitive of a compiled model, as the manifest describes it: what
// it computes, which of its kernel's buffers it reads and writes, and the
// element-wise epilogue it fuses. The compiler fills it in
// (codegen/library_anchor.cc); the runtime makes the primitive from it when an
// artifact loads (targets/cpu/runtime/dnnl_primitive.h), so no generated code includes
// oneDNN and no run pays for making a primitive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

// Weights in the layout a library primitive reads (oneDNN's blocking, the
// Winograd transform), made from a plain copy by the primitive of a target.
class PreparedWeights {
 public:
  virtual ~PreparedWeights() = default;
};

// A float32 tensor (or of an int8 primitive's type, PrimitiveQuantization)
// as oneDNN sees it: dims and element strides, or a
// layout of oneDNN's (`format`: "nChw8c", channels in blocks of 8
// innermost, padded; or "nhwc", channels last) that only primitives read
// and write.
struct PrimitiveTensor {
  std::vector<int64_t> dims, strides;
  std::string format;  // empty: strides apply
  bool empty() const { return dims.empty(); }
  bool operator==(const PrimitiveTensor&) const = default;
};

// Whether the tensor's strides visit its dimensions in another order than
// row-major: a transpose fused into the primitive that reads or writes it.
// A layout (`format`) names its own element order, so such a tensor cannot
// take one without losing the permutation.
inline bool strides_permuted(const PrimitiveTensor& tensor) {
  if (!tensor.format.empty() || tensor.strides.size() != tensor.dims.size()) return false;
  int64_t previous = -1;
  for (size_t d = 0; d < tensor.dims.size(); ++d) {
    if (tensor.dims[d] <= 1) continue;
    if (previous >= 0 && tensor.strides[d] > previous) return true;
    previous = tensor.strides[d];
  }
  return false;
}

// kReorder copies src into dst in another layout (no weights, window or
// post-ops): a layout conversion PlanLayouts inserts.
enum class PrimitiveKind : uint8_t { kConvolution, kMatmul, kPooling, kReorder };

struct PrimitivePostOp {
  enum class Kind : uint8_t {
    kEltwise,  // algorithm(alpha, beta) on the result
    kSum,      // adds kernel input `input` (the destination's dims, laid out as `operand`) to the result
    kBinary,   // algorithm(result, kernel input `input` broadcast from `operand`)
    // A depthwise convolution of the result (a 1x1 convolution's, in
    // oneDNN's fusion): weights kernel input `input` laid out as `operand`
    // ({channels, 1, 1, k, k}), bias kernel input `bias_input` (-1: none),
    // `stride` and `padding` (left and top) in both spatial dimensions. The
    // spec's dst is the depthwise result; post-ops after it apply to that.
    kDepthwise,
  };
  Kind kind = Kind::kEltwise;
  std::string algorithm;  // oneDNN's name: "eltwise_relu", "binary_add"; empty for sum
  float alpha = 0, beta = 0;
  int input = -1;
  PrimitiveTensor operand;
  int bias_input = -1;                // kDepthwise
  int64_t stride = 1, padding = 0;  // kDepthwise
  bool operator==(const PrimitivePostOp&) const = default;
};

// The algorithm names of the CPU runtime's own primitives, which a manifest's
// primitive spec may carry (the manifest's vocabulary, read by
// primitive_json.cc).
constexpr const char* kWinogradAlgorithm = "convolution_winograd";
constexpr const char* kPackedMatmulAlgorithm = "matmul_packed";

// An int8 convolution or matmul (a quantized model's): oneDNN's element
// types of src, weights and dst ("u8" or "s8"; the weights "s8", their zero
// point 0), the output scales that take the int32 accumulator plus the
// float32 bias to dst's scale (one, or one per output channel), and the
// zero points of src and dst. oneDNN computes
// saturate(round_half_to_even((accumulator + bias) * scale [post-ops] +
// dst_zero_point)), the accumulator over src - src_zero_point padded with
// zeros (docs/operators.md, "int8"). No types: float32 throughout.
struct PrimitiveQuantization {
  std::string src_type, weights_type, dst_type;
  std::vector<float> output_scales;
  int32_t src_zero_point = 0, dst_zero_point = 0;
  bool empty() const { return src_type.empty(); }
  bool operator==(const PrimitiveQuantization&) const = default;
};

struct PrimitiveSpec {
  PrimitiveKind kind = PrimitiveKind::kMatmul;
  // oneDNN's name: "convolution_direct", "pooling_max",
  // "pooling_avg_include_padding", "pooling_avg_exclude_padding"; empty for
  // matmul. kWinogradAlgorithm and kPackedMatmulAlgorithm are the CPU
  // runtime's own (targets/cpu/runtime/winograd_convolution.h, packed_matmul.h).
  std::string algorithm;
  PrimitiveTensor src, weights, bias, dst;  // weights and bias are empty when absent
  // The kernel inputs they are read from; dst is the kernel's output 0.
  int src_input = 0, weights_input = -1, bias_input = -1;
  // Window geometry of convolutions and pools, per spatial dimension;
  // dilation counts skipped elements (0: dense), as oneDNN does.
  std::vector<int64_t> strides, kernel, dilation, padding_l, padding_r;
  // Whether oneDNN chooses the layout of the weights, and of the activations
  // (which are then reordered from and to the plain layouts around it).
  bool any_weights_layout = false, any_activation_layout = false;
  std::vector<PrimitivePostOp> post_ops;
  PrimitiveQuantization quantization;  // empty for float32
  bool operator==(const PrimitiveSpec&) const = default;
};

const char* primitive_kind_name(PrimitiveKind kind);
const char* post_op_kind_name(PrimitivePostOp::Kind kind);  // "eltwise", "depthwise", ...

// The activation formats other than plain NCHW a primitive may read and
// write: oneDNN's channel blocks, and channels last, which its AVX-512
// brgconv kernels compute in.
constexpr const char* kActivationFormats[] = {"nChw8c", "nChw16c", "nhwc"};

// The channels an activation format keeps together in a block: 8 or 16 for
// nChw8c and nChw16c, 0 for channels last (and any other format).
inline int activation_channel_block(const std::string& format) {
  return format == "nChw8c" ? 8 : format == "nChw16c" ? 16 : 0;
}

}  // namespace switchyard
