#include "targets/cpu/runtime/dnnl_quantization.h"

#include "runtime/runtime_error.h"

namespace switchyard {

using dnnl::memory;

namespace {

memory::data_type type_named(const std::string& name) {
  if (name == "u8") return memory::data_type::u8;
  if (name == "s8") return memory::data_type::s8;
  throw RuntimeError("unknown int8 element type '" + name + "'");
}

}  // namespace

DnnlElementTypes dnnl_element_types(const PrimitiveSpec& spec) {
  constexpr memory::data_type kF32 = memory::data_type::f32;
  const PrimitiveQuantization& q = spec.quantization;
  if (q.empty()) return {kF32, kF32, kF32};
  if (is_8bit_max_pool(spec)) return {type_named(q.src_type), kF32, type_named(q.dst_type)};
  if (spec.kind != PrimitiveKind::kConvolution && spec.kind != PrimitiveKind::kMatmul)
    throw RuntimeError(std::string("a quantized ") + primitive_kind_name(spec.kind) + " is not supported");
  if (spec.algorithm == kWinogradAlgorithm || spec.algorithm == kPackedMatmulAlgorithm)
    throw RuntimeError("the runtime's own " + spec.algorithm + " kernel computes float32 only");
  for (const PrimitivePostOp& post : spec.post_ops)
    if (post.kind != PrimitivePostOp::Kind::kEltwise)
      throw RuntimeError(std::string("a quantized primitive takes element-wise post-ops only, not ") +
                         post_op_kind_name(post.kind));
  if (q.weights_type != "s8") throw RuntimeError("int8 weights must be s8, not '" + q.weights_type + "'");
  return {type_named(q.src_type), type_named(q.weights_type), type_named(q.dst_type)};
}

bool is_8bit_max_pool(const PrimitiveSpec& spec) {
  const PrimitiveQuantization& q = spec.quantization;
  if (spec.kind != PrimitiveKind::kPooling || q.empty()) return false;
  if (spec.algorithm != "pooling_max" || q.src_type != q.dst_type || (q.src_type != "u8" && q.src_type != "s8") ||
      !q.output_scales.empty() || q.src_zero_point != 0 || q.dst_zero_point != 0 || !spec.post_ops.empty())
    throw RuntimeError("an 8-bit pool is a max pool of one element type, with no scales, zero points or post-ops");
  return true;
}

void set_quantization_attributes(const PrimitiveSpec& spec, dnnl::primitive_attr& attr) {
  const PrimitiveQuantization& q = spec.quantization;
  if (q.empty() || is_8bit_max_pool(spec)) return;
  int channel_axis = spec.kind == PrimitiveKind::kConvolution ? 1 : int(spec.dst.dims.size()) - 1;
  attr.set_output_scales(q.output_scales.size() > 1 ? 1 << channel_axis : 0, q.output_scales);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
}

void add_zero_point_arguments(const PrimitiveSpec& spec, const dnnl::engine& engine,
                              std::unordered_map<int, memory>& arguments) {
  const PrimitiveQuantization& q = spec.quantization;
  if (q.empty() || is_8bit_max_pool(spec)) return;
  memory::desc one({1}, memory::data_type::s32, memory::format_tag::x);
  // oneDNN only reads them.
  arguments.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
                    memory(one, engine, const_cast<int32_t*>(&q.src_zero_point)));
  arguments.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST,
                    memory(one, engine, const_cast<int32_t*>(&q.dst_zero_point)));
}

}  // namespace switchyard
