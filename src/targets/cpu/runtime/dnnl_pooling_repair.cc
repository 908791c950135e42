// Recomputes the outputs of a oneDNN float32 pool that its arithmetic may
// have got wrong, as the reference interpreter computes them
// (interp/kernels_conv_pool.cc): a max where NaN wins (oneDNN skips it) and
// an empty window is -inf; an average summed in double.
#include "targets/cpu/runtime/dnnl_pooling_repair.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "targets/cpu/runtime/cpu_features.h"

namespace switchyard {

namespace {

using Index = std::array<int64_t, 4>;  // n, c, h, w

// The element at `index` of a blocked oneDNN layout (every layout the
// runtime gives a kernel's buffer: strides, nChw8c, nChw16c, nhwc), as
// oneDNN's own memory_desc_wrapper::off_v computes it.
int64_t offset_of(const dnnl_memory_desc_t& layout, const Index& index) {
  const dnnl_blocking_desc_t& blocking = layout.format_desc.blocking;
  Index outer = index;
  int64_t inner = 0, inner_stride = 1;
  for (int i = blocking.inner_nblks - 1; i >= 0; --i) {
    int dim = int(blocking.inner_idxs[i]);
    int64_t block = blocking.inner_blks[i];
    inner += outer[size_t(dim)] % block * inner_stride;
    outer[size_t(dim)] /= block;
    inner_stride *= block;
  }
  int64_t offset = layout.offset0 + inner;
  for (size_t dim = 0; dim < 4; ++dim) offset += outer[dim] * blocking.strides[dim];
  return offset;
}

bool is_lowest(float value) { return value == std::numeric_limits<float>::lowest(); }

bool is_not_finite(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return (bits & 0x7f800000u) == 0x7f800000u;
}

bool is_nan(float value) { return value != value; }

// Whether any of the `count` floats at `values` is a suspect: a scan without
// branches that vectorises, so a result with none costs one pass over it.
template <bool (*suspect)(float)>
inline __attribute__((always_inline)) bool scan_body(const float* values, size_t count) {
  unsigned found = 0;
  for (size_t i = 0; i < count; ++i) found |= unsigned(suspect(values[i]));
  return found != 0;
}

// The scan compiled for AVX2 (8 floats a compare) and for any x86-64 (4):
// a max pool's source is scanned whole on every run, and with SSE the scan
// took longer than oneDNN's pool itself.
template <bool (*suspect)(float)>
__attribute__((target("avx2"))) bool scan_avx2(const float* values, size_t count) {
  return scan_body<suspect>(values, count);
}
template <bool (*suspect)(float)>
bool scan_generic(const float* values, size_t count) {
  return scan_body<suspect>(values, count);
}

// The scan split over the device's threads.
template <bool (*suspect)(float)>
bool any_suspect(const float* values, size_t count, const ParallelFor& parallel_for) {
  auto scan = cpu_has_avx2_fma() ? scan_avx2<suspect> : scan_generic<suspect>;
  constexpr int64_t kGrain = 16384;  // 64 KiB: a share worth waking a thread for
  std::atomic<bool> found{false};
  parallel_for(int64_t(count), kGrain, [&](int64_t begin, int64_t end) {
    if (scan(values + begin, size_t(end - begin))) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

class Pool {
 public:
  Pool(const PrimitiveSpec& spec, const dnnl_memory_desc_t& src_layout, const float* src)
      : spec_(spec), src_layout_(src_layout), src_(src), max_(spec.algorithm == "pooling_max"),
        include_padding_(spec.algorithm == "pooling_avg_include_padding") {}

  bool is_max() const { return max_; }

  // Output (n, c, oh, ow) as the interpreter computes it.
  float output(const Index& at) const {
    const std::vector<int64_t>& dims = spec_.src.dims;
    double sum = 0;
    int64_t real = 0, padded = 0;
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t kh = 0; kh < spec_.kernel[0]; ++kh) {
      int64_t ih = at[2] * spec_.strides[0] - spec_.padding_l[0] + kh * (spec_.dilation[0] + 1);
      for (int64_t kw = 0; kw < spec_.kernel[1]; ++kw) {
        int64_t iw = at[3] * spec_.strides[1] - spec_.padding_l[1] + kw * (spec_.dilation[1] + 1);
        // The compiler gives oneDNN a count_include_pad pool only where
        // padding_r is the attribute's padding, which such a pool counts.
        if (ih < dims[2] + spec_.padding_r[0] && iw < dims[3] + spec_.padding_r[1]) ++padded;
        if (ih < 0 || ih >= dims[2] || iw < 0 || iw >= dims[3]) continue;
        float value = src_[offset_of(src_layout_, {at[0], at[1], ih, iw})];
        ++real;
        sum += double(value);
        if (!std::isnan(best) && (value > best || std::isnan(value))) best = value;  // NaN wins and stays
      }
    }
    if (max_) return best;
    int64_t divisor = include_padding_ ? padded : real;
    return divisor == 0 ? 0.0f : float(sum / double(divisor));
  }

 private:
  const PrimitiveSpec& spec_;
  const dnnl_memory_desc_t& src_layout_;
  const float* src_;
  bool max_, include_padding_;
};

}  // namespace

void repair_pooling_outputs(const PrimitiveSpec& spec, const dnnl::memory::desc& src_layout, const float* src,
                            const dnnl::memory::desc& dst_layout, float* dst, const ParallelFor& parallel_for) {
  const dnnl_memory_desc_t& source = src_layout.data;
  const dnnl_memory_desc_t& result = dst_layout.data;
  if (spec.kind != PrimitiveKind::kPooling || !spec.post_ops.empty() || spec.src.dims.size() != 4 ||
      spec.dst.dims.size() != 4 || source.format_kind != dnnl_blocked || result.format_kind != dnnl_blocked)
    return;
  Pool pool(spec, source, src);
  // oneDNN's max skips a NaN, which the rule lets win: only the source tells
  // where one was, so a source holding one has every output recomputed.
  bool source_nan = pool.is_max() && any_suspect<is_nan>(src, src_layout.get_size() / sizeof(float), parallel_for);
  auto suspect = [&](float value) {
    return source_nan || (pool.is_max() ? is_lowest(value) : is_not_finite(value));
  };
  // The buffers may hold padding elements past the channels (nChw8c): a
  // suspect there only costs the walk below.
  size_t floats = dst_layout.get_size() / sizeof(float);
  if (!source_nan && (pool.is_max() ? !any_suspect<is_lowest>(dst, floats, parallel_for)
                                    : !any_suspect<is_not_finite>(dst, floats, parallel_for)))
    return;
  const std::vector<int64_t>& dims = spec.dst.dims;
  for (int64_t n = 0; n < dims[0]; ++n)
    for (int64_t c = 0; c < dims[1]; ++c)
      for (int64_t h = 0; h < dims[2]; ++h)
        for (int64_t w = 0; w < dims[3]; ++w) {
          float& value = dst[offset_of(result, {n, c, h, w})];
          if (suspect(value)) value = pool.output({n, c, h, w});
        }
}

}  // namespace switchyard
