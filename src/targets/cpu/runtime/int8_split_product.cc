#include "targets/cpu/runtime/int8_split_product.h"

#include <emmintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/dnnl_reorder.h"
#include "targets/cpu/runtime/dnnl_tensor_desc.h"

namespace switchyard {

namespace {

using dnnl::memory;
using DataType = memory::data_type;
constexpr size_t kSplitAlignment = 64;

size_t split_aligned(size_t bytes) { return (bytes + kSplitAlignment - 1) / kSplitAlignment * kSplitAlignment; }

// Channels innermost, so the epilogue reads each channel's bias and scale
// in turn: a convolution's (N, C, spatial...) as N, spatial..., C; a
// matmul's rows as they are.
memory::desc channels_last_desc(const memory::dims& dims, DataType type, bool convolution) {
  if (!convolution) return memory::desc(dims, type, dnnl_dense_strides(dims));
  memory::dims strides(dims.size());
  int64_t stride = dims[1];
  strides[1] = 1;
  for (size_t d = dims.size(); d-- > 2;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  strides[0] = stride;
  return memory::desc(dims, type, strides);
}

// One of the two int32 products, as oneDNN made it.
struct SplitProduct {
  dnnl::primitive primitive;
  memory::desc src, weights, scratchpad;
  std::string implementation;
};

}  // namespace

struct Int8SplitProduct::Impl {
  PrimitiveSpec spec;
  int threads = 1;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  bool convolution = false, signed_src = false, relu = false;
  float relu_slope = 0;
  int64_t channels = 0, rows = 0;
  std::vector<float> channel_scales, zeros;  // the output scale of each channel; a missing bias
  memory::desc src_buffer;     // the kernel's source, read as u8 bytes
  memory::desc dst_buffer;     // the kernel's destination
  memory::desc plain_weights;  // s8, as the kernel's weights are given
  memory::desc products;       // each int32 product, channels last
  memory::desc result;         // the epilogue's output, channels last, dst's type
  SplitProduct high, low;           // the products by h = w >> 1 and by l = w & 1
  DnnlReorder to_src, from_result;
  std::string implementation;
  // The prepared weights: a header (its first byte 1 where they are split,
  // 0 where every weight fits 7 bits and the high half holds them whole),
  // then the high and the low halves.
  static constexpr size_t kHeaderBytes = kSplitAlignment;
  size_t low_weights_offset = 0, prepared_bytes = 0;
  size_t scratchpad_offset = 0, src_offset = 0, high_offset = 0, low_offset = 0, result_offset = 0,
         workspace_bytes = 0;

  bool reordered_src() const { return high.src != src_buffer; }
  bool reordered_result() const { return result != dst_buffer; }
  bool copies_src() const { return signed_src || reordered_src(); }

  SplitProduct make_product(const memory::desc& src_layout) const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    memory::desc weights_any(spec.weights.dims, DataType::s8, memory::format_tag::any);
    if (convolution) {
      dnnl::convolution_forward::desc operation(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::convolution_direct, src_layout, weights_any, products,
                                                spec.strides, spec.dilation, spec.padding_l, spec.padding_r);
      dnnl::convolution_forward::primitive_desc made(operation, attr, engine);
      return {dnnl::convolution_forward(made), made.src_desc(), made.weights_desc(), made.scratchpad_desc(),
              made.impl_info_str()};
    }
    dnnl::matmul::desc operation(src_layout, weights_any, products);
    dnnl::matmul::primitive_desc made(operation, attr, engine);
    return {dnnl::matmul(made), made.src_desc(), made.weights_desc(), made.scratchpad_desc(), made.impl_info_str()};
  }

  void run_product(const dnnl::stream& stream, const SplitProduct& product, const memory& src, const void* weights,
                   void* dst, void* scratchpad, int32_t* zero_point) const {
    std::unordered_map<int, memory> arguments = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, memory(product.weights, engine, const_cast<void*>(weights))},
        {DNNL_ARG_DST, memory(products, engine, dst)},
        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
         memory(memory::desc({1}, DataType::s32, memory::format_tag::x), engine, zero_point)},
    };
    if (product.scratchpad.get_size() > 0)
      arguments.emplace(DNNL_ARG_SCRATCHPAD, memory(product.scratchpad, engine, scratchpad));
    product.primitive.execute(stream, arguments);
  }

  // 2 * high + low of rows [begin, end) through the epilogue into `out`.
  template <typename T>
  void requantize_rows(const int32_t* high_sum, const int32_t* low_sum, const float* bias, T* out, int64_t begin,
                       int64_t end) const {
    const float* row_bias = bias ? bias : zeros.data();
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row = r * channels;
      if (!low_sum)
        relu ? requantize_row<T, true, false>(high_sum + row, nullptr, row_bias, out + row)
             : requantize_row<T, false, false>(high_sum + row, nullptr, row_bias, out + row);
      else
        relu ? requantize_row<T, true, true>(high_sum + row, low_sum + row, row_bias, out + row)
             : requantize_row<T, false, true>(high_sum + row, low_sum + row, row_bias, out + row);
    }
  }

  // One row of channels, 16 at a time in SSE2 (every x86-64 CPU has it;
  // GCC's own vectorisation of this loop kept a branch per clamp). The
  // conversions round as MXCSR says, half to even, as oneDNN's do.
  // With kSplit the accumulator is 2 * high + low, else high alone (7-bit
  // weights, multiplied whole).
  template <typename T, bool kRelu, bool kSplit>
  void requantize_row(const int32_t* high_sum, const int32_t* low_sum, const float* bias, T* out) const {
    const float* scale = channel_scales.data();
    const float zero_point = float(spec.quantization.dst_zero_point);
    const float lowest = float(std::numeric_limits<T>::min()), highest = float(std::numeric_limits<T>::max());
    auto requantize = [&](__m128i high, __m128i low, const float* b, const float* s) {
      __m128i sum = kSplit ? _mm_add_epi32(_mm_add_epi32(high, high), low) : high;
      __m128 v = _mm_mul_ps(_mm_add_ps(_mm_cvtepi32_ps(sum), _mm_loadu_ps(b)), _mm_loadu_ps(s));
      if (kRelu) {
        __m128 positive = _mm_cmpgt_ps(v, _mm_setzero_ps());
        v = _mm_or_ps(_mm_and_ps(positive, v), _mm_andnot_ps(positive, _mm_mul_ps(v, _mm_set1_ps(relu_slope))));
      }
      v = _mm_add_ps(v, _mm_set1_ps(zero_point));
      v = _mm_min_ps(_mm_max_ps(v, _mm_set1_ps(lowest)), _mm_set1_ps(highest));
      return _mm_cvtps_epi32(v);
    };
    int64_t c = 0;
    for (; c + 16 <= channels; c += 16) {
      __m128i q[4];
      for (int k = 0; k < 4; ++k) {
        const int64_t at = c + 4 * k;
        __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(high_sum + at));
        __m128i low = kSplit ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(low_sum + at)) : high;
        q[k] = requantize(high, low, bias + at, scale + at);
      }
      __m128i words0 = _mm_packs_epi32(q[0], q[1]), words1 = _mm_packs_epi32(q[2], q[3]);
      __m128i bytes = std::is_same_v<T, uint8_t> ? _mm_packus_epi16(words0, words1) : _mm_packs_epi16(words0, words1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), bytes);
    }
    for (; c < channels; ++c) {
      float v = (float(kSplit ? 2 * high_sum[c] + low_sum[c] : high_sum[c]) + bias[c]) * scale[c];
      if (kRelu) v = v > 0 ? v : v * relu_slope;
      v = std::min(std::max(v + zero_point, lowest), highest);
      out[c] = T(_mm_cvtss_si32(_mm_set_ss(v)));
    }
  }
};

Int8SplitProduct::Int8SplitProduct(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Int8SplitProduct::~Int8SplitProduct() = default;

std::unique_ptr<Int8SplitProduct> Int8SplitProduct::make(const PrimitiveSpec& spec, int threads) {
  const PrimitiveQuantization& q = spec.quantization;
  bool convolution = spec.kind == PrimitiveKind::kConvolution;
  if (q.empty() || spec.weights.empty() || q.weights_type != "s8" || (q.src_type != "u8" && q.src_type != "s8") ||
      (q.dst_type != "u8" && q.dst_type != "s8"))
    return nullptr;
  if (convolution ? spec.algorithm != "convolution_direct" || spec.src.dims.size() < 3
                  : spec.kind != PrimitiveKind::kMatmul)
    return nullptr;
  auto p = std::make_unique<Impl>();
  p->spec = spec;
  p->threads = std::max(threads, 1);
  p->convolution = convolution;
  p->signed_src = q.src_type == "s8";
  for (const PrimitivePostOp& post : spec.post_ops) {
    if (post.kind != PrimitivePostOp::Kind::kEltwise || post.algorithm != "eltwise_relu" || p->relu) return nullptr;
    p->relu = true;
    p->relu_slope = post.alpha;
  }
  const memory::dims& dst = spec.dst.dims;
  p->channels = convolution ? dst[1] : dst.back();
  p->rows = 1;
  for (int64_t d : dst) p->rows *= d;
  p->rows /= std::max<int64_t>(p->channels, 1);
  if (q.output_scales.size() != 1 && int64_t(q.output_scales.size()) != p->channels) return nullptr;
  p->channel_scales = q.output_scales.size() == 1 ? std::vector<float>(size_t(p->channels), q.output_scales[0])
                                                  : q.output_scales;
  p->zeros.assign(size_t(p->channels), 0.0f);
  if (!spec.bias.empty() && dnnl_buffer_desc(spec.bias).get_size() != size_t(p->channels) * sizeof(float))
    return nullptr;
  const DataType dst_type = q.dst_type == "u8" ? DataType::u8 : DataType::s8;
  p->src_buffer = dnnl_buffer_desc(spec.src, DataType::u8);
  p->dst_buffer = dnnl_buffer_desc(spec.dst, dst_type);
  p->plain_weights = dnnl_buffer_desc(spec.weights, DataType::s8);
  p->products = channels_last_desc(dst, DataType::s32, convolution);
  p->result = channels_last_desc(dst, dst_type, convolution);

  omp_set_num_threads(p->threads);  // the products' blocking depends on it
  p->high = p->make_product(convolution ? memory::desc(spec.src.dims, DataType::u8, memory::format_tag::any)
                                        : p->src_buffer);
  p->low = p->make_product(p->high.src);
  if (dnnl_is_reference_implementation(p->high.implementation) ||
      dnnl_is_reference_implementation(p->low.implementation) || p->low.src != p->high.src)
    return nullptr;
  p->implementation = "int8_split:" + p->high.implementation;

  size_t scratchpad = std::max(p->high.scratchpad.get_size(), p->low.scratchpad.get_size());
  if (p->reordered_src()) {
    p->to_src = DnnlReorder(p->engine, p->src_buffer, p->high.src);
    scratchpad = std::max(scratchpad, p->to_src.scratchpad_bytes());
  }
  if (p->reordered_result()) {
    p->from_result = DnnlReorder(p->engine, p->result, p->dst_buffer);
    scratchpad = std::max(scratchpad, p->from_result.scratchpad_bytes());
  }
  auto place = [&](size_t bytes) {
    size_t offset = p->workspace_bytes;
    p->workspace_bytes += split_aligned(bytes);
    return offset;
  };
  p->scratchpad_offset = place(scratchpad);
  if (p->copies_src()) p->src_offset = place(p->high.src.get_size());
  p->high_offset = place(p->products.get_size());
  p->low_offset = place(p->products.get_size());
  if (p->reordered_result()) p->result_offset = place(p->result.get_size());
  p->low_weights_offset = Impl::kHeaderBytes + split_aligned(p->high.weights.get_size());
  p->prepared_bytes = p->low_weights_offset + p->low.weights.get_size();
  return std::unique_ptr<Int8SplitProduct>(new Int8SplitProduct(std::move(p)));
}

const std::string& Int8SplitProduct::implementation() const { return impl_->implementation; }
const std::string& Int8SplitProduct::products_implementation() const { return impl_->high.implementation; }
size_t Int8SplitProduct::prepared_weights_bytes() const { return impl_->prepared_bytes; }
size_t Int8SplitProduct::workspace_bytes() const { return impl_->workspace_bytes; }

void Int8SplitProduct::prepare_weights(const void* weights, void* prepared) const {
  const Impl& p = *impl_;
  const size_t count = p.plain_weights.get_size();
  const int8_t* w = static_cast<const int8_t*>(weights);
  // Weights of 7 bits (a reduce_range export's) cannot saturate: one product.
  const bool split = std::any_of(w, w + count, [](int8_t v) { return v < -64 || v > 63; });
  std::vector<int8_t> high(w, w + count), low(count, 0);
  if (split)
    for (size_t i = 0; i < count; ++i) {
      high[i] = int8_t(w[i] >> 1);  // floor(w / 2): w = 2 * high + low
      low[i] = int8_t(w[i] & 1);
    }
  omp_set_num_threads(p.threads);
  dnnl::stream stream(p.engine);
  char* out = static_cast<char*>(prepared);
  std::memset(out, 0, Impl::kHeaderBytes);
  out[0] = split ? 1 : 0;
  DnnlReorder(p.engine, p.plain_weights, p.high.weights)
      .execute_with_own_scratchpad(stream, memory(p.plain_weights, p.engine, high.data()),
                                   memory(p.high.weights, p.engine, out + Impl::kHeaderBytes));
  DnnlReorder(p.engine, p.plain_weights, p.low.weights)
      .execute_with_own_scratchpad(stream, memory(p.plain_weights, p.engine, low.data()),
                                   memory(p.low.weights, p.engine, out + p.low_weights_offset));
  stream.wait();
}

void Int8SplitProduct::execute(const void* const* inputs, void* const* outputs, const void* prepared_weights,
                               void* workspace, const ParallelFor& parallel_for) const {
  const Impl& p = *impl_;
  const PrimitiveSpec& s = p.spec;
  char* scratch = static_cast<char*>(workspace);
  void* scratchpad = scratch + p.scratchpad_offset;
  omp_set_num_threads(p.threads);
  dnnl::stream stream(p.engine);

  memory src(p.src_buffer, p.engine, const_cast<void*>(inputs[s.src_input]));
  if (p.copies_src()) {
    memory copy(p.high.src, p.engine, scratch + p.src_offset);
    if (p.reordered_src())
      p.to_src.execute(stream, src, copy, scratchpad);
    else
      std::memcpy(copy.get_data_handle(), src.get_data_handle(), p.src_buffer.get_size());
    stream.wait();
    // s8 to u8: x + 128 flips the top bit; the zero point moves with it.
    if (p.signed_src) {
      uint8_t* bytes = static_cast<uint8_t*>(copy.get_data_handle());
      for (size_t i = 0, n = p.high.src.get_size(); i < n; ++i) bytes[i] ^= 0x80;
    }
    src = copy;
  }
  int32_t zero_point = s.quantization.src_zero_point + (p.signed_src ? 128 : 0);
  const char* weights = static_cast<const char*>(prepared_weights);
  int32_t* high_sum = reinterpret_cast<int32_t*>(scratch + p.high_offset);
  int32_t* low_sum = reinterpret_cast<int32_t*>(scratch + p.low_offset);
  const bool split = weights[0] != 0;
  p.run_product(stream, p.high, src, weights + Impl::kHeaderBytes, high_sum, scratchpad, &zero_point);
  if (split) p.run_product(stream, p.low, src, weights + p.low_weights_offset, low_sum, scratchpad, &zero_point);
  stream.wait();
  if (!split) low_sum = nullptr;

  const float* bias = s.bias.empty() ? nullptr : static_cast<const float*>(inputs[s.bias_input]);
  void* out = p.reordered_result() ? scratch + p.result_offset : outputs[0];
  ParallelBody rows = [&](int64_t begin, int64_t end) {
    if (s.quantization.dst_type == "u8")
      p.requantize_rows(high_sum, low_sum, bias, static_cast<uint8_t*>(out), begin, end);
    else
      p.requantize_rows(high_sum, low_sum, bias, static_cast<int8_t*>(out), begin, end);
  };
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(p.channels, 1));
  if (parallel_for)
    parallel_for(p.rows, grain, rows);
  else
    rows(0, p.rows);
  if (p.reordered_result()) {
    p.from_result.execute(stream, memory(p.result, p.engine, out), memory(p.dst_buffer, p.engine, outputs[0]),
                          scratchpad);
    stream.wait();
  }
}

}  // namespace switchyard
