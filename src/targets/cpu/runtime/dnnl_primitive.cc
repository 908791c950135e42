#include "targets/cpu/runtime/dnnl_primitive.h"

#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "runtime/huge_pages.h"
#include "runtime/primitive_json.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/dnnl_layout_text.h"
#include "targets/cpu/runtime/dnnl_pooling_repair.h"
#include "targets/cpu/runtime/dnnl_quantization.h"
#include "targets/cpu/runtime/dnnl_reorder.h"
#include "targets/cpu/runtime/dnnl_tensor_desc.h"
#include "targets/cpu/runtime/int8_split_product.h"
#include "targets/cpu/runtime/primitive_post_ops.h"
#include "targets/cpu/runtime/winograd_convolution.h"

namespace switchyard {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;
constexpr size_t kWorkspaceAlignment = 64;

dnnl::algorithm algorithm_named(const std::string& name) {
  static const std::map<std::string, dnnl::algorithm> known = {
      {"convolution_direct", dnnl::algorithm::convolution_direct},
      {"pooling_max", dnnl::algorithm::pooling_max},
      {"pooling_avg_include_padding", dnnl::algorithm::pooling_avg_include_padding},
      {"pooling_avg_exclude_padding", dnnl::algorithm::pooling_avg_exclude_padding},
      {"eltwise_relu", dnnl::algorithm::eltwise_relu},
      {"eltwise_tanh", dnnl::algorithm::eltwise_tanh},
      {"eltwise_logistic", dnnl::algorithm::eltwise_logistic},
      {"eltwise_exp", dnnl::algorithm::eltwise_exp},
      {"eltwise_log", dnnl::algorithm::eltwise_log},
      {"eltwise_sqrt", dnnl::algorithm::eltwise_sqrt},
      {"eltwise_abs", dnnl::algorithm::eltwise_abs},
      {"eltwise_linear", dnnl::algorithm::eltwise_linear},
      {"eltwise_pow", dnnl::algorithm::eltwise_pow},
      {"eltwise_clip", dnnl::algorithm::eltwise_clip},
      {"eltwise_hardswish", dnnl::algorithm::eltwise_hardswish},
      {"eltwise_swish", dnnl::algorithm::eltwise_swish},
      {"eltwise_gelu_erf", dnnl::algorithm::eltwise_gelu_erf},
      {"binary_add", dnnl::algorithm::binary_add},
      {"binary_mul", dnnl::algorithm::binary_mul},
      {"binary_sub", dnnl::algorithm::binary_sub},
      {"binary_div", dnnl::algorithm::binary_div},
      {"binary_max", dnnl::algorithm::binary_max},
      {"binary_min", dnnl::algorithm::binary_min},
  };
  auto it = known.find(name);
  if (it == known.end()) throw RuntimeError("unknown oneDNN algorithm '" + name + "'");
  return it->second;
}

// The layout of a kernel's buffer (float32, or an int8 primitive's type).
memory::desc plain(const PrimitiveTensor& t, memory::data_type type = kF32) { return dnnl_buffer_desc(t, type); }
memory::desc any_layout(const PrimitiveTensor& t, memory::data_type type) { return memory::desc(t.dims, type, Tag::any); }
Tag format_named(const std::string& name) { return dnnl_format_named(name); }

size_t aligned(size_t bytes) { return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

// Weights in the layout the primitive reads: in the Winograd domain, packed
// in panels or reordered into oneDNN's layout, 64-byte aligned.
struct HostWeights : PreparedWeights {
  const float* data = nullptr;
  memory reordered;  // over `data`, for a oneDNN primitive
};

// Prepared at load, on huge pages when large: faulting ResNet-50's ~100 MB
// of them in 4 KiB pages was a quarter of its load.
struct OwnedWeights final : HostWeights {
  explicit OwnedWeights(size_t bytes) : buffer(static_cast<float*>(allocate_maybe_on_huge_pages(bytes))) {
    if (!buffer) throw RuntimeError("out of memory for " + std::to_string(bytes) + " bytes of prepared weights");
    data = buffer;
  }
  ~OwnedWeights() override { std::free(buffer); }
  OwnedWeights(const OwnedWeights&) = delete;
  OwnedWeights& operator=(const OwnedWeights&) = delete;
  float* buffer;
};

// Prepared by the compiler and read where weights.bin is mapped (the
// artifact keeps the mapping for as long as its primitives).
struct StoredWeights final : HostWeights {};

}  // namespace

struct DnnlPrimitive::Impl {
  PrimitiveSpec spec;
  int threads = 1;
  // The runtime's own kernels, in place of a oneDNN primitive, when asked for.
  std::unique_ptr<WinogradConvolution> winograd;
  std::unique_ptr<PackedMatmul> packed;
  // An 8-bit product on a CPU whose oneDNN jit kernels saturate: two exact ones.
  std::unique_ptr<Int8SplitProduct> split;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  memory::desc src, weights, bias, dst;  // the layouts of the kernel's buffers
  DnnlElementTypes types{kF32, kF32, kF32};  // of src, weights and dst
  std::vector<memory::desc> operands;    // of binary and sum post-ops, by post-op index
  std::vector<DnnlReorder> to_residual;  // a sum's residual into the chosen dst layout, where they differ
  // A fused depthwise convolution's post-op (an index into spec.post_ops,
  // or -1), its weights' plain layout and the one the primitive reads.
  int depthwise = -1;
  memory::desc depthwise_weights, chosen_depthwise_weights, depthwise_bias;
  DnnlReorder to_depthwise_weights;
  // The layouts the primitive reads and writes, and its scratchpad.
  memory::desc chosen_src, chosen_weights, chosen_dst, scratchpad;
  // The scratchpad the primitive and the reorders around it use in turn.
  size_t scratchpad_bytes = 0;
  dnnl::primitive primitive;
  std::string implementation;  // oneDNN's name for it, e.g. "brg:avx512_core"
  DnnlReorder to_src, from_dst, to_weights;
  // Where each piece lies in the workspace.
  size_t scratchpad_offset = 0, src_offset = 0, dst_offset = 0, weights_offset = 0, depthwise_weights_offset = 0,
         workspace_bytes = 0;

  bool blocked_src() const { return chosen_src != src; }
  bool blocked_dst() const { return chosen_dst != dst; }
  bool blocked_weights() const { return !spec.weights.empty() && chosen_weights != weights; }
  bool blocked_depthwise_weights() const { return depthwise >= 0 && chosen_depthwise_weights != depthwise_weights; }
  const PrimitivePostOp* depthwise_post_op() const { return depthwise >= 0 ? &spec.post_ops[size_t(depthwise)] : nullptr; }

  dnnl::primitive_attr attributes() const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops posts;
    for (size_t i = 0; i < spec.post_ops.size(); ++i) {
      const PrimitivePostOp& p = spec.post_ops[i];
      switch (p.kind) {
        case PrimitivePostOp::Kind::kEltwise: {
          OneDnnEltwise e = onednn_eltwise(p);
          posts.append_eltwise(1.0f, algorithm_named(e.algorithm), e.alpha, e.beta);
          break;
        }
        case PrimitivePostOp::Kind::kSum:
          posts.append_sum(1.0f);
          break;
        case PrimitivePostOp::Kind::kBinary:
          posts.append_binary(algorithm_named(p.algorithm), operands[i]);
          break;
        case PrimitivePostOp::Kind::kDepthwise:
          posts.append_dw(kF32, p.bias_input >= 0 ? kF32 : memory::data_type::undef, kF32, p.operand.dims[3],
                          p.stride, p.padding, 0, {});
          break;
      }
    }
    attr.set_post_ops(posts);
    set_quantization_attributes(spec, attr);
    return attr;
  }

  // Makes the primitive and records the layouts it chose.
  template <typename Primitive>
  void make(const typename Primitive::desc& operation) {
    typename Primitive::primitive_desc description(operation, attributes(), engine);
    if (multiplies_8_bit_values() && !int8_jit_kernels_are_exact())
      while (!dnnl_is_reference_implementation(description.impl_info_str()))
        if (!description.next_impl())
          throw RuntimeError("oneDNN has no exact 8-bit kernel for this primitive on a CPU without VNNI");
    chosen_src = description.src_desc();
    chosen_dst = description.dst_desc();
    if (!spec.weights.empty()) chosen_weights = description.weights_desc();
    if (depthwise >= 0)
      chosen_depthwise_weights =
          description.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
    scratchpad = description.scratchpad_desc();
    implementation = description.impl_info_str();
    primitive = Primitive(description);
  }

  // A convolution or matmul of 8-bit values: its products are what VNNI exists for.
  bool multiplies_8_bit_values() const {
    memory::data_type t = src.data_type();
    return (spec.kind == PrimitiveKind::kConvolution || spec.kind == PrimitiveKind::kMatmul) &&
           (t == memory::data_type::u8 || t == memory::data_type::s8);
  }

  // A layout conversion: src and dst as they are given.
  void make_reorder() {
    if (!spec.weights.empty() || !spec.bias.empty() || !spec.post_ops.empty())
      throw RuntimeError("a reorder reads no weights or bias and has no post-ops");
    if (spec.src.dims != spec.dst.dims) throw RuntimeError("a reorder's src and dst have other dims");
    dnnl::reorder::primitive_desc description(engine, src, engine, dst, attributes());
    chosen_src = src;
    chosen_dst = dst;
    scratchpad = description.scratchpad_desc();
    implementation = description.impl_info_str();
    primitive = dnnl::reorder(description);
    workspace_bytes = aligned(scratchpad.get_size());
  }

  void make_primitive() {
    if (spec.kind == PrimitiveKind::kReorder) return make_reorder();
    // A blocked buffer is read and written as it is; oneDNN chooses for plain ones.
    memory::desc src_layout =
        spec.any_activation_layout && spec.src.format.empty() ? any_layout(spec.src, types.src) : src;
    memory::desc dst_layout =
        spec.any_activation_layout && spec.dst.format.empty() ? any_layout(spec.dst, types.dst) : dst;
    // A convolution reading a laid-out source writes that layout (then
    // reordered to the dense destination): left to choose, oneDNN gave a
    // depthwise one reading nChw16c an nhwc destination, which only its
    // reference kernel runs (48 ms against 0.3 for 64 channels at 56x56).
    if (spec.kind == PrimitiveKind::kConvolution && spec.any_activation_layout && !spec.src.format.empty() &&
        spec.dst.format.empty())
      dst_layout = memory::desc(spec.dst.dims, types.dst, format_named(spec.src.format));
    // With a fused depthwise convolution the descriptor's destination is
    // the convolution's own result, which only oneDNN sees.
    if (depthwise >= 0) dst_layout = convolution_result();
    // oneDNN's fast pools write the layout they read.
    if (spec.kind == PrimitiveKind::kPooling && !spec.src.format.empty())
      dst_layout = memory::desc(spec.dst.dims, types.dst, format_named(spec.src.format));
    make_operation(src_layout, dst_layout);
    // oneDNN's jit pools and grouped convolutions read and write one layout:
    // given a dense source and a laid-out destination it runs them with its
    // reference loops (a max pool of SqueezeNet 48 ms against 0.3), and in
    // channel blocks it has no jit convolution dilated past the image (the
    // ASPP of DeepLabV3: 2 s against 2 ms in channels last). Such a
    // primitive reads the destination's layout (its source reordered to it),
    // or computes in channels last between reorders, or writes a dense
    // result then reordered to the destination: the first that oneDNN has
    // jit loops for.
    if (dnnl_is_reference_implementation(implementation) && spec.kind != PrimitiveKind::kMatmul && depthwise < 0) {
      std::vector<std::pair<memory::desc, memory::desc>> alternatives;
      if (spec.src.format.empty() && !spec.dst.format.empty())
        alternatives.emplace_back(memory::desc(spec.src.dims, types.src, format_named(spec.dst.format)), dst_layout);
      if (spec.src.dims.size() == 4) {
        // A dense 1x1 image is channels last too, which oneDNN may take it
        // for (a global pool's result).
        alternatives.emplace_back(memory::desc(spec.src.dims, types.src, Tag::nhwc), dst_layout);
        alternatives.emplace_back(memory::desc(spec.src.dims, types.src, Tag::nhwc),
                                  memory::desc(spec.dst.dims, types.dst, Tag::nhwc));
      }
      if (spec.src.format.empty())
        alternatives.emplace_back(src, memory::desc(spec.dst.dims, types.dst, dnnl_dense_strides(spec.dst.dims)));
      bool found = false;
      for (const auto& [source, destination] : alternatives) {
        make_operation(source, destination);
        if ((found = !dnnl_is_reference_implementation(implementation))) break;
      }
      if (!found) make_operation(src_layout, dst_layout);
    }
    finish_making();
  }

  // Describes and makes the primitive of `spec` reading and writing these layouts.
  void make_operation(const memory::desc& src_layout, const memory::desc& dst_layout) {
    memory::desc weights_layout = spec.any_weights_layout ? any_layout(spec.weights, types.weights) : weights;
    switch (spec.kind) {
      case PrimitiveKind::kMatmul: {
        auto make_matmul = [&](const memory::desc& weights_layout) {
          make<dnnl::matmul>(spec.bias.empty() ? dnnl::matmul::desc(src_layout, weights_layout, dst_layout)
                                               : dnnl::matmul::desc(src_layout, weights_layout, bias, dst_layout));
        };
        make_matmul(weights_layout);
        // A matrix of weights oneDNN chooses the layout of is packed for its
        // brgemm kernels, the fastest (the encoder's 128x256x1024 product
        // with a bias: 0.33 ms at one thread, 0.17 at two, against 0.36 and
        // 0.23 column by column, on a Zen 5). Where oneDNN runs its GEMM
        // instead, which keeps them row by row, they go column by column (as
        // nn.dense stores them): that GEMM ran the same product in 0.7 ms
        // that way against 1.45 (one thread, on a Xeon).
        if (spec.any_weights_layout && spec.weights.dims.size() == 2 && implementation.rfind("brg", 0) != 0)
          make_matmul(memory::desc(spec.weights.dims, types.weights, Tag::ba));
        break;
      }
      case PrimitiveKind::kConvolution: {
        const auto prop = dnnl::prop_kind::forward_inference;
        const dnnl::algorithm algorithm = algorithm_named(spec.algorithm);
        make<dnnl::convolution_forward>(
            spec.bias.empty()
                ? dnnl::convolution_forward::desc(prop, algorithm, src_layout, weights_layout, dst_layout, spec.strides,
                                                  spec.dilation, spec.padding_l, spec.padding_r)
                : dnnl::convolution_forward::desc(prop, algorithm, src_layout, weights_layout, bias, dst_layout,
                                                  spec.strides, spec.dilation, spec.padding_l, spec.padding_r));
        break;
      }
      case PrimitiveKind::kReorder:
        break;
      case PrimitiveKind::kPooling:
        make<dnnl::pooling_v2_forward>(dnnl::pooling_v2_forward::desc(
            dnnl::prop_kind::forward_inference, algorithm_named(spec.algorithm), src_layout, dst_layout, spec.strides,
            spec.kernel, spec.dilation, spec.padding_l, spec.padding_r));
        break;
    }
  }

  // The reorders around the primitive made, and its scratch space.
  void finish_making() {
    refuse_misapplied_binary_operands();
    if (depthwise >= 0 && chosen_dst.dims() != dst.dims())
      throw RuntimeError("its depthwise post-op computes other dims than the destination's");
    scratchpad_bytes = scratchpad.get_size();
    auto make_reorder = [&](const memory::desc& from, const memory::desc& to) {
      DnnlReorder reorder(engine, from, to);
      scratchpad_bytes = std::max(scratchpad_bytes, reorder.scratchpad_bytes());
      return reorder;
    };
    if (blocked_src()) to_src = make_reorder(src, chosen_src);
    if (blocked_dst()) from_dst = make_reorder(chosen_dst, dst);
    if (blocked_weights()) to_weights = make_reorder(weights, chosen_weights);
    if (blocked_depthwise_weights()) to_depthwise_weights = make_reorder(depthwise_weights, chosen_depthwise_weights);
    to_residual.resize(spec.post_ops.size());
    for (size_t i = 0; i < spec.post_ops.size(); ++i)
      if (spec.post_ops[i].kind == PrimitivePostOp::Kind::kSum && operands[i] != chosen_dst)
        to_residual[i] = make_reorder(operands[i], chosen_dst);
    auto place = [&](size_t bytes) {
      size_t offset = workspace_bytes;
      workspace_bytes += aligned(bytes);
      return offset;
    };
    // One scratchpad serves them all: each runs after the one before has
    // returned, on the calling thread.
    scratchpad_offset = place(scratchpad_bytes);
    if (blocked_src()) src_offset = place(chosen_src.get_size());
    if (blocked_dst()) dst_offset = place(chosen_dst.get_size());
    if (blocked_weights()) weights_offset = place(chosen_weights.get_size());
    if (blocked_depthwise_weights()) depthwise_weights_offset = place(chosen_depthwise_weights.get_size());
  }

  // oneDNN's GEMM-based convolution writing a channels-last or blocked
  // destination reads a binary post-op's operand at the wrong elements
  // unless it holds one value per channel or one in all (a spatial or
  // per-image operand gave errors as large as the values); its other
  // implementations were right, but which one runs is oneDNN's choice.
  void refuse_misapplied_binary_operands() const {
    if (spec.kind != PrimitiveKind::kConvolution) return;
    const memory::dims& dims = spec.dst.dims;
    if (chosen_dst == memory::desc(dims, kF32, dnnl_dense_strides(dims))) return;
    for (const PrimitivePostOp& post : spec.post_ops) {
      if (post.kind != PrimitivePostOp::Kind::kBinary) continue;
      const std::vector<int64_t>& operand = post.operand.dims;
      bool per_channel_or_one = true;
      for (size_t d = 0; d < operand.size(); ++d) per_channel_or_one &= operand[d] == 1 || d == 1;
      if (!per_channel_or_one)
        throw RuntimeError("a binary post-op operand other than one value per channel, on a convolution writing a "
                           "channels-last or blocked destination");
    }
  }

  // The result of a convolution with a depthwise post-op before that runs:
  // channels from the weights, the window's extent per spatial dimension,
  // in the destination's activation format.
  memory::desc convolution_result() const {
    if (spec.kind != PrimitiveKind::kConvolution || spec.dst.format.empty() || spec.src.dims.size() != 4)
      throw RuntimeError("a depthwise post-op needs a 2-d convolution with a blocked or channels-last destination");
    memory::dims dims{spec.src.dims[0], spec.weights.dims[0], 0, 0};
    for (size_t d = 0; d < 2; ++d) {
      int64_t window = (spec.weights.dims[2 + d] - 1) * (spec.dilation[d] + 1) + 1;
      dims[2 + d] = (spec.src.dims[2 + d] + spec.padding_l[d] + spec.padding_r[d] - window) / spec.strides[d] + 1;
    }
    return memory::desc(dims, kF32, format_named(spec.dst.format));
  }
};

DnnlPrimitive::DnnlPrimitive(const PrimitiveSpec& spec, int threads) : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.spec = spec;
  p.threads = std::max(threads, 1);
  p.types = dnnl_element_types(spec);
  p.src = plain(spec.src, p.types.src);
  p.dst = plain(spec.dst, p.types.dst);
  if (!spec.weights.empty()) p.weights = plain(spec.weights, p.types.weights);
  if (!spec.bias.empty()) p.bias = plain(spec.bias);
  for (size_t i = 0; i < spec.post_ops.size(); ++i) {
    const PrimitivePostOp& post = spec.post_ops[i];
    bool operand = post.kind == PrimitivePostOp::Kind::kSum || post.kind == PrimitivePostOp::Kind::kBinary;
    p.operands.push_back(operand ? plain(post.operand) : memory::desc());
    if (post.kind != PrimitivePostOp::Kind::kDepthwise) continue;
    if (p.depthwise >= 0) throw RuntimeError("a primitive fuses at most one depthwise convolution");
    p.depthwise = int(i);
    p.depthwise_weights = plain(post.operand);
    p.depthwise_bias = memory::desc({post.operand.dims[0]}, kF32, Tag::x);
  }
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind == PrimitivePostOp::Kind::kSum && spec.kind == PrimitiveKind::kPooling)
      throw RuntimeError("oneDNN's pooling ignores a sum post-op");
  bool own_kernel = spec.algorithm == kWinogradAlgorithm || spec.algorithm == kPackedMatmulAlgorithm;
  if (std::string why = repeated_eltwise_parameters(spec.post_ops); !why.empty() && !own_kernel)
    throw RuntimeError("oneDNN computes " + why + " wrong (each takes the first one's parameters)");
  // The primitive's blocking depends on the thread count it is made for.
  omp_set_num_threads(p.threads);
  try {
    if (spec.algorithm == kWinogradAlgorithm)
      p.winograd = std::make_unique<WinogradConvolution>(spec, p.threads);
    else if (spec.algorithm == kPackedMatmulAlgorithm)
      p.packed = std::make_unique<PackedMatmul>(spec);
    else if (p.multiplies_8_bit_values() && !int8_jit_kernels_are_exact() &&
             (p.split = Int8SplitProduct::make(spec, p.threads)))
      p.implementation = p.split->implementation();
    else
      p.make_primitive();
  } catch (const dnnl::error& e) {
    throw RuntimeError(std::string("oneDNN cannot make the ") + primitive_kind_name(spec.kind) + " primitive " +
                       primitive_spec_text(spec).substr(0, 200) + ": " + e.what());
  }
}

DnnlPrimitive::~DnnlPrimitive() = default;

bool DnnlPrimitive::multiplies_with_onednn_gemm() const {
  const Impl& p = *impl_;
  const std::string& implementation = p.winograd ? p.winograd->products_implementation()
                                      : p.split  ? p.split->products_implementation()
                                                 : p.implementation;
  return implementation.rfind("gemm", 0) == 0;
}

void generate_onednn_gemm_kernels() {
  static std::once_flag generated;
  std::call_once(generated, [] {
    omp_set_num_threads(1);  // a team of OpenMP threads of its own would outlive the call
    float a[64] = {}, b[64] = {}, c[64] = {};
    dnnl_sgemm('N', 'N', 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8);
  });
}

const PrimitiveSpec& DnnlPrimitive::spec() const { return impl_->spec; }
size_t DnnlPrimitive::workspace_bytes() const {
  if (impl_->split) return impl_->split->workspace_bytes();
  return impl_->winograd ? impl_->winograd->workspace_bytes() : impl_->workspace_bytes;
}

bool DnnlPrimitive::needs_prepared_weights() const { return impl_->winograd || impl_->packed || impl_->split; }

std::string DnnlPrimitive::prepared_weights_layout() const {
  const Impl& p = *impl_;
  const PrimitiveSpec& s = p.spec;
  if (p.winograd)
    return "winograd_f4x4_3x3 [36][" + std::to_string(s.weights.dims[1]) + "][" + std::to_string(s.weights.dims[0]) +
           "]";
  if (p.packed)
    return "packed [panels][k][24] dims=" + joined(s.weights.dims.data(), int(s.weights.dims.size()));
  // Compensated layouts have no text: the compiler stores them plain and a load splits them.
  if (p.split) return "";
  return p.blocked_weights() ? layout_text(p.chosen_weights) : "";
}

size_t DnnlPrimitive::prepared_weights_bytes() const {
  const Impl& p = *impl_;
  if (p.winograd) return p.winograd->transformed_weights_size() * sizeof(float);
  if (p.packed) return p.packed->packed_weights_size() * sizeof(float);
  if (p.split) return p.split->prepared_weights_bytes();
  return p.blocked_weights() ? p.chosen_weights.get_size() : 0;
}

void DnnlPrimitive::prepare_weights_into(const void* weights, void* prepared) const {
  const Impl& p = *impl_;
  if (p.winograd) return p.winograd->transform_weights(static_cast<const float*>(weights), static_cast<float*>(prepared));
  if (p.packed) return p.packed->pack_weights(static_cast<const float*>(weights), static_cast<float*>(prepared));
  if (p.split) return p.split->prepare_weights(weights, prepared);
  if (!p.blocked_weights()) throw RuntimeError("the primitive reads its weights as they are");
  omp_set_num_threads(p.threads);
  dnnl::stream stream(p.engine);
  memory given(p.weights, p.engine, const_cast<void*>(weights));
  memory reordered(p.chosen_weights, p.engine, prepared);
  p.to_weights.execute_with_own_scratchpad(stream, given, reordered);
  stream.wait();
}

size_t DnnlPrimitive::prepared_weights_granule() const {
  return impl_->packed ? impl_->packed->panel_size() * sizeof(float) : 0;
}

void DnnlPrimitive::prepare_weights_range(const void* weights, size_t begin, size_t end, void* prepared) const {
  const size_t granule = prepared_weights_granule();
  if (granule == 0 || begin % granule != 0 || begin > end || end > prepared_weights_bytes() ||
      (end % granule != 0 && end != prepared_weights_bytes()))
    throw RuntimeError("cannot prepare bytes " + std::to_string(begin) + " to " + std::to_string(end) +
                       " of this primitive's weights on their own");
  impl_->packed->pack_panels(weights, int64_t(begin / granule), int64_t((end + granule - 1) / granule),
                             static_cast<float*>(prepared));
}

std::shared_ptr<const PreparedWeights> DnnlPrimitive::prepare_weights(const void* weights) const {
  const Impl& p = *impl_;
  if (!p.winograd && !p.packed && !p.split && !p.blocked_weights()) return nullptr;
  auto prepared = std::make_shared<OwnedWeights>(prepared_weights_bytes());
  prepare_weights_into(weights, prepared->buffer);
  if (!p.split && p.blocked_weights()) prepared->reordered = memory(p.chosen_weights, p.engine, prepared->buffer);
  return prepared;
}

bool DnnlPrimitive::fuses_depthwise() const { return impl_->depthwise >= 0; }

std::shared_ptr<const PreparedWeights> DnnlPrimitive::prepare_depthwise_weights(const void* weights) const {
  const Impl& p = *impl_;
  if (!p.blocked_depthwise_weights()) return nullptr;
  auto prepared = std::make_shared<OwnedWeights>(p.chosen_depthwise_weights.get_size());
  prepared->reordered = memory(p.chosen_depthwise_weights, p.engine, prepared->buffer);
  omp_set_num_threads(p.threads);
  dnnl::stream stream(p.engine);
  memory given(p.depthwise_weights, p.engine, const_cast<void*>(weights));
  p.to_depthwise_weights.execute_with_own_scratchpad(stream, given, prepared->reordered);
  stream.wait();
  return prepared;
}

const std::string& DnnlPrimitive::implementation() const { return impl_->implementation; }

std::shared_ptr<const PreparedWeights> DnnlPrimitive::adopt_prepared_weights(const void* stored, size_t bytes,
                                                                             const std::string& layout) const {
  const Impl& p = *impl_;
  const std::string wanted = prepared_weights_layout();
  if (layout == wanted) {
    if (bytes != prepared_weights_bytes())
      throw RuntimeError("weights prepared as '" + layout + "' are " + std::to_string(bytes) + " bytes, not " +
                         std::to_string(prepared_weights_bytes()));
    auto adopted = std::make_shared<StoredWeights>();
    adopted->data = static_cast<const float*>(stored);
    if (p.blocked_weights()) adopted->reordered = memory(p.chosen_weights, p.engine, const_cast<void*>(stored));
    return adopted;
  }
  // oneDNN chose another layout here (another CPU or thread count than the
  // compiler's): reordered from the stored one.
  if (wanted.rfind("onednn ", 0) != 0 || layout.rfind("onednn ", 0) != 0)
    throw RuntimeError("weights prepared as '" + layout + "', but this primitive reads '" +
                       (wanted.empty() ? std::string("plain weights") : wanted) + "'");
  memory::desc given_layout;
  try {
    given_layout = layout_from_text(layout);
    if (given_layout.dims() != p.chosen_weights.dims()) throw RuntimeError("its dimensions are not the weights'");
    if (given_layout.get_size() != bytes)
      throw RuntimeError("it takes " + std::to_string(given_layout.get_size()) + " bytes, not " + std::to_string(bytes));
    auto prepared = std::make_shared<OwnedWeights>(p.chosen_weights.get_size());
    prepared->reordered = memory(p.chosen_weights, p.engine, prepared->buffer);
    omp_set_num_threads(p.threads);
    dnnl::stream stream(p.engine);
    memory given(given_layout, p.engine, const_cast<void*>(stored));
    DnnlReorder(p.engine, given_layout, p.chosen_weights).execute_with_own_scratchpad(stream, given, prepared->reordered);
    stream.wait();
    return prepared;
  } catch (const dnnl::error& e) {
    throw RuntimeError("oneDNN cannot reorder weights prepared as '" + layout + "': " + e.what());
  } catch (const RuntimeError& e) {
    throw RuntimeError("weights prepared as '" + layout + "': " + e.what());
  }
}

namespace {
// What a primitive's own loops run on when the caller gives no threads.
void serial_for(int64_t n, int64_t, const ParallelBody& body) { body(0, n); }
}  // namespace

void DnnlPrimitive::execute(const void* const* inputs, void* const* outputs, const PreparedWeights* weights,
                            const PreparedWeights* depthwise_weights, void* workspace,
                            const ParallelFor& parallel_for) const {
  const Impl& p = *impl_;
  const PrimitiveSpec& s = p.spec;
  char* scratch = static_cast<char*>(workspace);
  auto input = [&](int index) { return const_cast<void*>(inputs[index]); };
  omp_set_num_threads(p.threads);  // oneDNN's OpenMP reads the calling thread's setting
  if (p.split) {
    if (!weights) throw RuntimeError("the split 8-bit product runs only with weights prepared when it is made");
    return p.split->execute(inputs, outputs, static_cast<const HostWeights*>(weights)->data, workspace,
                            parallel_for ? parallel_for : serial_for);
  }
  if (p.winograd || p.packed) {
    if (!weights) throw RuntimeError(std::string(p.winograd ? "the Winograd convolution" : "the packed matmul") +
                                     " runs only with weights prepared when it is made");
    const float* prepared = static_cast<const HostWeights*>(weights)->data;
    if (p.winograd)
      p.winograd->execute(inputs, outputs, prepared, workspace);
    else
      p.packed->execute(inputs, outputs, prepared, parallel_for ? parallel_for : serial_for);
    return;
  }
  dnnl::stream stream(p.engine);
  std::unordered_map<int, memory> arguments;
  char* scratchpad = scratch + p.scratchpad_offset;

  memory src(p.src, p.engine, input(s.src_input));
  if (p.blocked_src()) {
    memory blocked(p.chosen_src, p.engine, scratch + p.src_offset);
    p.to_src.execute(stream, src, blocked, scratchpad);
    src = blocked;
  }
  arguments.emplace(DNNL_ARG_SRC, src);
  if (!s.weights.empty()) {
    if (weights) {
      arguments.emplace(DNNL_ARG_WEIGHTS, static_cast<const HostWeights*>(weights)->reordered);
    } else if (p.blocked_weights()) {
      memory given(p.weights, p.engine, input(s.weights_input));
      memory reordered(p.chosen_weights, p.engine, scratch + p.weights_offset);
      p.to_weights.execute(stream, given, reordered, scratchpad);
      arguments.emplace(DNNL_ARG_WEIGHTS, reordered);
    } else {
      arguments.emplace(DNNL_ARG_WEIGHTS, memory(p.weights, p.engine, input(s.weights_input)));
    }
  }
  if (!s.bias.empty()) arguments.emplace(DNNL_ARG_BIAS, memory(p.bias, p.engine, input(s.bias_input)));
  if (const PrimitivePostOp* post = p.depthwise_post_op()) {
    constexpr int kDepthwise = DNNL_ARG_ATTR_POST_OP_DW;
    if (depthwise_weights) {
      arguments.emplace(kDepthwise | DNNL_ARG_WEIGHTS, static_cast<const HostWeights*>(depthwise_weights)->reordered);
    } else if (p.blocked_depthwise_weights()) {
      memory given(p.depthwise_weights, p.engine, input(post->input));
      memory reordered(p.chosen_depthwise_weights, p.engine, scratch + p.depthwise_weights_offset);
      p.to_depthwise_weights.execute(stream, given, reordered, scratchpad);
      arguments.emplace(kDepthwise | DNNL_ARG_WEIGHTS, reordered);
    } else {
      arguments.emplace(kDepthwise | DNNL_ARG_WEIGHTS, memory(p.depthwise_weights, p.engine, input(post->input)));
    }
    if (post->bias_input >= 0)
      arguments.emplace(kDepthwise | DNNL_ARG_BIAS, memory(p.depthwise_bias, p.engine, input(post->bias_input)));
  }
  memory output(p.dst, p.engine, outputs[0]);
  memory dst = p.blocked_dst() ? memory(p.chosen_dst, p.engine, scratch + p.dst_offset) : output;
  arguments.emplace(DNNL_ARG_DST, dst);
  for (size_t i = 0; i < s.post_ops.size(); ++i) {
    const PrimitivePostOp& post = s.post_ops[i];
    if (post.kind == PrimitivePostOp::Kind::kBinary) {
      arguments.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i)) | DNNL_ARG_SRC_1,
                        memory(p.operands[i], p.engine, input(post.input)));
    } else if (post.kind == PrimitivePostOp::Kind::kSum) {
      // The sum post-op adds what the destination holds: the residual goes there first.
      memory residual(p.operands[i], p.engine, input(post.input));
      if (p.operands[i] != p.chosen_dst)
        p.to_residual[i].execute(stream, residual, dst, scratchpad);
      else if (input(post.input) != dst.get_data_handle())
        std::memcpy(dst.get_data_handle(), input(post.input), p.chosen_dst.get_size());
    }
  }
  if (p.scratchpad.get_size() > 0) arguments.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, p.engine, scratchpad));
  add_zero_point_arguments(s, p.engine, arguments);
  p.primitive.execute(stream, arguments);
  if (p.blocked_dst()) p.from_dst.execute(stream, dst, output, scratchpad);
  stream.wait();
  // Its -inf windows and float sums, where they differ from the rules (an
  // 8-bit max pool's empty window is the type's lowest value, as the rules say).
  if (s.kind == PrimitiveKind::kPooling && s.quantization.empty())
    repair_pooling_outputs(s, p.src, static_cast<const float*>(inputs[s.src_input]), p.dst,
                           static_cast<float*>(outputs[0]), parallel_for ? parallel_for : serial_for);
}

size_t dnnl_tensor_bytes(const PrimitiveTensor& tensor) { return plain(tensor).get_size(); }

int dnnl_effective_isa() { return static_cast<int>(dnnl::get_effective_cpu_isa()); }

bool int8_jit_kernels_are_exact() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
    case dnnl::cpu_isa::avx2_vnni:
      return true;
    default:
      return false;
  }
}

bool dnnl_uses_avx512() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

int dnnl_channel_block() { return dnnl_uses_avx512() ? 16 : 8; }

std::string dnnl_implementation(const PrimitiveSpec& spec) {
  try {
    return DnnlPrimitive(spec, 1).implementation();
  } catch (const RuntimeError&) {
    return "";
  }
}

bool dnnl_makes(const PrimitiveSpec& spec) { return !dnnl_implementation(spec).empty(); }

bool dnnl_is_reference_implementation(const std::string& implementation) {
  return implementation.rfind("ref", 0) == 0 || implementation.rfind("simple", 0) == 0 ||
         implementation.find(":ref") != std::string::npos;
}

}  // namespace switchyard
