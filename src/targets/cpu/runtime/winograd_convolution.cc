#include "targets/cpu/runtime/winograd_convolution.h"

#include <omp.h>

#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "runtime/float8.h"
#include "runtime/runtime_error.h"
#include "runtime/thread_pool.h"
#include "targets/cpu/runtime/cpu_features.h"
#include "targets/cpu/runtime/primitive_post_ops.h"

namespace switchyard {
namespace {

// Output tile side, input tile side, and transformed elements per tile.
constexpr int64_t kOut = 4, kTile = 6, kElements = kTile * kTile;
// Channels per vector: the transforms work on 8 channels of one pixel at once.
constexpr int64_t kLanes = 8;
constexpr size_t kAlignment = 64;

using Vector = Float8;
static_assert(sizeof(Vector) == kLanes * sizeof(float));

size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The transform matrices of F(4x4, 3x3) with interpolation points 0, ±1,
// ±2 (and infinity): G maps a 3-tap filter to 6 points, Bᵀ a 6-point input
// to the transformed domain, Aᵀ 6 products back to 4 outputs.
constexpr float kG[kTile][3] = {{1.f / 4, 0, 0},
                                {-1.f / 6, -1.f / 6, -1.f / 6},
                                {-1.f / 6, 1.f / 6, -1.f / 6},
                                {1.f / 24, 1.f / 12, 1.f / 6},
                                {1.f / 24, -1.f / 12, 1.f / 6},
                                {0, 0, 1}};

// Bᵀ applied to the 6 vectors at d[0], d[stride], ... into t (same stride).
inline __attribute__((always_inline)) void input_transform(const Vector* d, Vector* t, int stride) {
  Vector d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride], d4 = d[4 * stride], d5 = d[5 * stride];
  t[0] = 4 * d0 - 5 * d2 + d4;
  t[stride] = d3 + d4 - 4 * (d1 + d2);
  t[2 * stride] = 4 * (d1 - d2) + d4 - d3;
  t[3 * stride] = 2 * (d3 - d1) + d4 - d2;
  t[4 * stride] = 2 * (d1 - d3) + d4 - d2;
  t[5 * stride] = 4 * d1 - 5 * d3 + d5;
}

// Aᵀ applied to the 6 vectors at m[0], m[stride], ... into 4 at o (same stride).
inline __attribute__((always_inline)) void output_transform(const Vector* m, Vector* o, int stride) {
  Vector m1 = m[stride], m2 = m[2 * stride], m3 = m[3 * stride], m4 = m[4 * stride];
  Vector a = m1 + m2, b = m1 - m2, c = m3 + m4, d = m3 - m4;
  o[0] = m[0] + a + c;
  o[stride] = b + 2 * d;
  o[2 * stride] = a + 4 * c;
  o[3 * stride] = b + 8 * d + m[5 * stride];
}

// A blocked tensor (nChw{block}c) of `channels` channels; channels last
// (nhwc) is the one block of all channels. The 8 channels of
// one group at one pixel are contiguous: `plane` finds the group's first
// pixel once per row of tiles, so the per-pixel step is one multiply (the
// divisions by a block not known at compile time cost more than the
// transforms themselves when done per pixel).
struct BlockedTensor {
  int64_t channels, height, width, block;
  size_t plane(int64_t n, int64_t group) const {
    int64_t blocks = (channels + block - 1) / block, channel = group * kLanes;
    return size_t((n * blocks + channel / block) * height * width * block + channel % block);
  }
  size_t pixel(int64_t y, int64_t x) const { return size_t((y * width + x) * block); }
};

struct Geometry {
  BlockedTensor src, dst;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0, tiles = 0;  // tiles counts every image's
};

// What one call's output transform reads and writes.
struct OutputPass {
  const float* bias = nullptr;          // null when absent
  std::vector<const float*> residuals;  // by post-op; null but for sums
  float* dst = nullptr;
};

// Tiles numbered image by image, row by row. A band is the run of tiles
// [first, first + count) whose transformed values and products lie in its
// own matrices [kElements][count][channels]; a span is the part of a band
// that one work item transforms, for the channel groups [group_begin,
// group_end). A thread goes through a tile's groups together, so the
// transformed tiles it writes (and the products it reads) are whole cache
// lines, not 32-byte halves whose other half comes back for a later item
// after the line left the cache.
struct TileSpan {
  int64_t first, count, group_begin, group_end;
};
struct BandMatrix {
  float* values;
  int64_t first, count;  // the band's tiles
  size_t at(int64_t element, int64_t tile, int64_t channels) const {
    return size_t((element * count + tile - first) * channels);
  }
};

// The input transform of one span: 6x6 input windows, zero outside the
// image, into the band's V [kElements][tiles][in channels].
inline __attribute__((always_inline)) void input_span_body(const Geometry& g, const float* src, const BandMatrix& v,
                                                           const TileSpan& span) {
  Vector d[kElements], t[kElements];
  const int64_t in_channels = g.src.channels, per_image = g.tiles_h * g.tiles_w;
  for (int64_t tile = span.first; tile < span.first + span.count; ++tile) {
    const int64_t n = tile / per_image, ty = tile % per_image / g.tiles_w, tx = tile % g.tiles_w;
    const int64_t y0 = ty * kOut - g.pad_top, x0 = tx * kOut - g.pad_left;
    for (int64_t group = span.group_begin; group < span.group_end; ++group) {
      const float* plane = src + g.src.plane(n, group);
      for (int64_t a = 0; a < kTile; ++a)
        for (int64_t b = 0; b < kTile; ++b) {
          int64_t y = y0 + a, x = x0 + b;
          if (y >= 0 && y < g.src.height && x >= 0 && x < g.src.width)
            load_float8(d[a * kTile + b], plane + g.src.pixel(y, x));
          else
            d[a * kTile + b] = Vector{};
        }
      for (int b = 0; b < kTile; ++b) input_transform(d + b, t + b, kTile);
      for (int a = 0; a < kTile; ++a) input_transform(t + a * kTile, d + a * kTile, 1);
      for (int64_t e = 0; e < kElements; ++e)
        store_float8(v.values + v.at(e, tile, in_channels) + group * kLanes, d[e]);
    }
  }
}

// The output transform of one span from the band's products, with the bias
// and post-ops, into the blocked destination.
inline __attribute__((always_inline)) void output_span_body(const Geometry& g, const std::vector<PostOp>& posts,
                                                            const OutputPass& pass, const BandMatrix& products,
                                                            const TileSpan& span) {
  Vector m[kElements], t[kOut * kTile], out[kOut * kOut];
  const int64_t out_channels = g.dst.channels, per_image = g.tiles_h * g.tiles_w;
  for (int64_t tile = span.first; tile < span.first + span.count; ++tile) {
    const int64_t n = tile / per_image, ty = tile % per_image / g.tiles_w, tx = tile % g.tiles_w;
    for (int64_t group = span.group_begin; group < span.group_end; ++group) {
      Vector bias{};
      if (pass.bias) load_float8(bias, pass.bias + group * kLanes);
      // A destination block that pads channels gets zeros in its padding.
      const bool pads = (group + 1) * kLanes == out_channels && out_channels % g.dst.block != 0;
      const size_t plane = g.dst.plane(n, group);
      for (int64_t e = 0; e < kElements; ++e)
        load_float8(m[e], products.values + products.at(e, tile, out_channels) + group * kLanes);
      for (int b = 0; b < kTile; ++b) output_transform(m + b, t + b, kTile);
      for (int a = 0; a < kOut; ++a) output_transform(t + a * kTile, out + a * kOut, 1);
      for (int64_t a = 0; a < kOut; ++a)
        for (int64_t b = 0; b < kOut; ++b) {
          int64_t y = ty * kOut + a, x = tx * kOut + b;
          if (y >= g.dst.height || x >= g.dst.width) continue;
          size_t at = plane + g.dst.pixel(y, x);
          Vector r = out[a * kOut + b] + bias;
          apply_post_ops(r, posts, pass.residuals.data(), at);
          store_float8(pass.dst + at, r);
          if (pads) std::memset(pass.dst + at + kLanes, 0, size_t(g.dst.block - kLanes) * sizeof(float));
        }
    }
  }
}

// Each body compiled for AVX2 with FMA (8 floats a register) and for any
// x86-64; the choice is made once per process.
__attribute__((target("avx2,fma"))) void input_span_avx2(const Geometry& g, const float* src, const BandMatrix& v,
                                                         const TileSpan& span) {
  input_span_body(g, src, v, span);
}
void input_span_generic(const Geometry& g, const float* src, const BandMatrix& v, const TileSpan& span) {
  input_span_body(g, src, v, span);
}
__attribute__((target("avx2,fma"))) void output_span_avx2(const Geometry& g, const std::vector<PostOp>& posts,
                                                          const OutputPass& pass, const BandMatrix& products,
                                                          const TileSpan& span) {
  output_span_body(g, posts, pass, products, span);
}
void output_span_generic(const Geometry& g, const std::vector<PostOp>& posts, const OutputPass& pass,
                         const BandMatrix& products, const TileSpan& span) {
  output_span_body(g, posts, pass, products, span);
}

// The work items of a transform of all tiles (one band) shared by the
// threads over `groups` channel groups: every row of tiles, cut into spans
// of whole groups so that each thread has several.
struct RowSpans {
  int64_t rows, tiles_w, groups, per_span, spans_per_row;
  RowSpans(const Geometry& g, int64_t images, int64_t groups_, int threads)
      : rows(images * g.tiles_h), tiles_w(g.tiles_w), groups(groups_) {
    // Two groups fill a cache line; more per span only if the rows alone
    // give each thread four items.
    per_span = rows >= 4 * threads ? groups : std::min<int64_t>(groups, 2);
    spans_per_row = (groups + per_span - 1) / per_span;
  }
  int64_t count() const { return rows * spans_per_row; }
  TileSpan operator[](int64_t item) const {
    int64_t row = item / spans_per_row, first = item % spans_per_row * per_span;
    return {row * tiles_w, tiles_w, first, std::min(groups, first + per_span)};
  }
};

bool dense(const PrimitiveTensor& t) {
  int64_t stride = 1;
  for (size_t d = t.dims.size(); d-- > 0;) {
    if (t.strides.size() != t.dims.size() || (t.dims[d] > 1 && t.strides[d] != stride)) return false;
    stride *= t.dims[d];
  }
  return true;
}

// Channels per block of a 4-d tensor's layout; 0 for plain NCHW.
int64_t block_of(const PrimitiveTensor& t) {
  if (t.format == "nChw8c") return 8;
  if (t.format == "nChw16c") return 16;
  if (t.format == "nhwc") return t.dims[1];
  return 0;
}

}  // namespace

std::string winograd_refusal(const PrimitiveSpec& s) {
  if (s.kind != PrimitiveKind::kConvolution) return "not a convolution";
  if (s.weights.dims.size() != 4) return "not a 2-d convolution of one group";
  if (s.weights.dims[2] != 3 || s.weights.dims[3] != 3) return "a window other than 3x3";
  if (s.strides != std::vector<int64_t>{1, 1}) return "a stride other than 1";
  if (s.dilation != std::vector<int64_t>{0, 0}) return "a dilated window";
  if (!dense(s.weights)) return "weights laid out other than OIHW";
  if (s.src.dims.size() != 4 || s.dst.dims.size() != 4) return "activations other than NCHW";
  if (!block_of(s.src) || !block_of(s.dst)) return "activations not in a blocked or channels-last layout";
  if (s.src.dims[1] % kLanes != 0 || s.dst.dims[1] % kLanes != 0) return "channels not a multiple of 8";
  if (!s.bias.empty() && (!dense(s.bias) || s.bias.dims != std::vector<int64_t>{s.dst.dims[1]}))
    return "a bias other than one per output channel";
  for (int64_t pad : s.padding_l)
    if (pad < 0 || pad > 2) return "padding other than 0 to 2";
  for (int64_t pad : s.padding_r)
    if (pad < 0 || pad > 2) return "padding other than 0 to 2";
  std::vector<PostOp> posts;
  return read_post_ops(s, &posts);
}

bool winograd_pays(const PrimitiveSpec& s) {
  // Measured on AVX2 (bench/winograd_bench.cc): 2x faster with 16 tiles per
  // image (14x14 outputs), 0.5x with 4 (7x7), whose transformed weights
  // are read for four rows each.
  constexpr int64_t kFewestTiles = 16;
  int64_t tiles = ((s.dst.dims[2] + kOut - 1) / kOut) * ((s.dst.dims[3] + kOut - 1) / kOut);
  return tiles >= kFewestTiles && s.src.dims[1] >= 16 && s.dst.dims[1] >= 16;
}

namespace {

// The 36 products of one band's tiles, as one batched oneDNN matmul.
struct BandProduct {
  int64_t tiles = 0;
  dnnl::memory::desc tiles_desc, products_desc, scratchpad_desc;
  dnnl::matmul matmul;
  std::string implementation;
};

// A band's tiles and where its matrices lie in the call's workspace.
struct Band {
  int64_t first = 0, count = 0;
  size_t tiles_offset = 0, products_offset = 0, scratchpad_offset = 0;
  const BandProduct* product = nullptr;
};

}  // namespace

WinogradSplit chosen_winograd_split(int64_t tiles, int64_t in_channels, int64_t out_channels, int threads) {
  if (threads <= 1) return WinogradSplit::kPhases;
  // In bands every thread reads all of the transformed weights; phase by
  // phase each reads its share of them but about half of the transformed
  // tiles and products were written by another core. Measured on two
  // threads (bench/winograd_bench.cc, winograd_split): bands pay until the
  // weights are about twice the tiles' data (ResNet's 28x28 layer, 128
  // channels: 0.31 vs 0.37 ms) and lose beyond (14x14 at 256: 0.40 vs 0.39).
  return 2 * tiles * (in_channels + out_channels) >= in_channels * out_channels ? WinogradSplit::kBands
                                                                                 : WinogradSplit::kPhases;
}

struct WinogradConvolution::Impl {
  PrimitiveSpec spec;
  int threads = 1;
  WinogradSplit split = WinogradSplit::kPhases;
  Geometry geometry;
  std::vector<PostOp> posts;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::memory::desc weights_desc;
  std::vector<std::unique_ptr<BandProduct>> products;  // one per band size
  std::vector<Band> bands;
  size_t workspace_bytes = 0;

  const BandProduct* product_of(int64_t tiles);
  void run_product(const Band& band, const float* transformed_weights, char* workspace) const;
};

// The product for bands of `tiles` tiles, made on first use. In bands it
// runs inside the call's team, on one thread (made while OpenMP's setting
// says so); phase by phase on all of them.
const BandProduct* WinogradConvolution::Impl::product_of(int64_t tiles) {
  for (const auto& product : products)
    if (product->tiles == tiles) return product.get();
  using Tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  auto product = std::make_unique<BandProduct>();
  product->tiles = tiles;
  product->tiles_desc = dnnl::memory::desc({kElements, tiles, geometry.src.channels}, f32, Tag::abc);
  product->products_desc = dnnl::memory::desc({kElements, tiles, geometry.dst.channels}, f32, Tag::abc);
  // The products' scratchpad is the call's, in its workspace: left to
  // oneDNN, it is one buffer per primitive (its brgemm matmul keeps one on
  // AVX-512), which every run executing this convolution at once would share.
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc made(
      dnnl::matmul::desc(product->tiles_desc, weights_desc, product->products_desc), attributes, engine);
  product->implementation = made.impl_info_str();
  product->matmul = dnnl::matmul(made);
  product->scratchpad_desc = made.scratchpad_desc();
  products.push_back(std::move(product));
  return products.back().get();
}

void WinogradConvolution::Impl::run_product(const Band& band, const float* transformed_weights,
                                            char* workspace) const {
  const BandProduct& product = *band.product;
  dnnl::stream stream(engine);
  std::unordered_map<int, dnnl::memory> arguments = {
      {DNNL_ARG_SRC, dnnl::memory(product.tiles_desc, engine, workspace + band.tiles_offset)},
      {DNNL_ARG_WEIGHTS, dnnl::memory(weights_desc, engine, const_cast<float*>(transformed_weights))},
      {DNNL_ARG_DST, dnnl::memory(product.products_desc, engine, workspace + band.products_offset)}};
  if (product.scratchpad_desc.get_size() > 0)
    arguments.emplace(DNNL_ARG_SCRATCHPAD,
                      dnnl::memory(product.scratchpad_desc, engine, workspace + band.scratchpad_offset));
  product.matmul.execute(stream, arguments);
  stream.wait();
}

WinogradConvolution::WinogradConvolution(const PrimitiveSpec& spec, int threads, WinogradSplit split)
    : impl_(std::make_unique<Impl>()) {
  if (std::string why = winograd_refusal(spec); !why.empty())
    throw RuntimeError("the Winograd convolution cannot compute " + why);
  Impl& p = *impl_;
  p.spec = spec;
  p.threads = std::max(threads, 1);
  read_post_ops(spec, &p.posts);
  Geometry& g = p.geometry;
  g.src = {spec.src.dims[1], spec.src.dims[2], spec.src.dims[3], block_of(spec.src)};
  g.dst = {spec.dst.dims[1], spec.dst.dims[2], spec.dst.dims[3], block_of(spec.dst)};
  g.pad_top = spec.padding_l[0];
  g.pad_left = spec.padding_l[1];
  g.tiles_h = (g.dst.height + kOut - 1) / kOut;
  g.tiles_w = (g.dst.width + kOut - 1) / kOut;
  g.tiles = spec.src.dims[0] * g.tiles_h * g.tiles_w;
  if (split == WinogradSplit::kChosen)
    split = chosen_winograd_split(g.tiles, g.src.channels, g.dst.channels, p.threads);
  p.split = p.threads > 1 ? split : WinogradSplit::kPhases;
  p.weights_desc = dnnl::memory::desc({kElements, g.src.channels, g.dst.channels}, dnnl::memory::data_type::f32,
                                      dnnl::memory::format_tag::abc);

  // Bands of as even a number of tiles as can be; each band's matrices one
  // after the other in the workspace, so a thread's lie together.
  const int64_t band_count = p.split == WinogradSplit::kBands ? std::min<int64_t>(p.threads, g.tiles) : 1;
  omp_set_num_threads(p.split == WinogradSplit::kBands ? 1 : p.threads);
  for (int64_t b = 0, first = 0; b < band_count; ++b) {
    Band band;
    band.first = first;
    band.count = g.tiles / band_count + (b < g.tiles % band_count ? 1 : 0);
    first += band.count;
    band.product = p.product_of(band.count);
    band.tiles_offset = p.workspace_bytes;
    band.products_offset = band.tiles_offset + aligned(band.product->tiles_desc.get_size());
    band.scratchpad_offset = band.products_offset + aligned(band.product->products_desc.get_size());
    p.workspace_bytes = band.scratchpad_offset + aligned(band.product->scratchpad_desc.get_size());
    p.bands.push_back(band);
  }
  omp_set_num_threads(p.threads);
}

WinogradConvolution::~WinogradConvolution() = default;

const std::string& WinogradConvolution::products_implementation() const {
  return impl_->products.front()->implementation;
}

WinogradSplit WinogradConvolution::split() const { return impl_->split; }

size_t WinogradConvolution::transformed_weights_size() const {
  return size_t(kElements * impl_->geometry.src.channels * impl_->geometry.dst.channels);
}

size_t WinogradConvolution::workspace_bytes() const { return impl_->workspace_bytes; }

void WinogradConvolution::transform_weights(const float* weights, float* transformed) const {
  const int64_t in = impl_->geometry.src.channels, out = impl_->geometry.dst.channels;
  // U[e][i][o] = (G g Gᵀ)[e] for the filter g of output o and input i, with
  // every inner loop running over o (contiguous in U, so it vectorises).
  openmp_parallel_for(impl_->threads, in, [&](int64_t i) {
    std::vector<float> taps(size_t(9 * out)), rows(size_t(kTile * 3 * out));  // [k][o], [a][c][o]
    for (int64_t o = 0; o < out; ++o)
      for (int k = 0; k < 9; ++k) taps[size_t(k * out + o)] = weights[(o * in + i) * 9 + k];
    for (int a = 0; a < kTile; ++a)
      for (int c = 0; c < 3; ++c) {
        float* row = &rows[size_t((a * 3 + c) * out)];
        const float *t0 = &taps[size_t(c * out)], *t1 = &taps[size_t((3 + c) * out)], *t2 = &taps[size_t((6 + c) * out)];
        for (int64_t o = 0; o < out; ++o) row[o] = kG[a][0] * t0[o] + kG[a][1] * t1[o] + kG[a][2] * t2[o];
      }
    for (int a = 0; a < kTile; ++a)
      for (int b = 0; b < kTile; ++b) {
        float* u = transformed + ((a * kTile + b) * in + i) * out;
        const float *r0 = &rows[size_t(a * 3 * out)], *r1 = r0 + out, *r2 = r1 + out;
        for (int64_t o = 0; o < out; ++o) u[o] = r0[o] * kG[b][0] + r1[o] * kG[b][1] + r2[o] * kG[b][2];
      }
  });
}

void WinogradConvolution::execute(const void* const* inputs, void* const* outputs, const float* transformed_weights,
                                  void* workspace) const {
  const Impl& p = *impl_;
  const Geometry& g = p.geometry;
  char* scratch = static_cast<char*>(workspace);
  const float* src = static_cast<const float*>(inputs[p.spec.src_input]);
  auto input_span = cpu_has_avx2_fma() ? input_span_avx2 : input_span_generic;
  auto output_span = cpu_has_avx2_fma() ? output_span_avx2 : output_span_generic;
  OutputPass pass;
  pass.bias = p.spec.bias.empty() ? nullptr : static_cast<const float*>(inputs[p.spec.bias_input]);
  for (const PostOp& post : p.posts)
    pass.residuals.push_back(post.kind == PostOp::Kind::kSum ? static_cast<const float*>(inputs[post.input])
                                                             : nullptr);
  pass.dst = static_cast<float*>(outputs[0]);
  const int64_t in_groups = g.src.channels / kLanes, out_groups = g.dst.channels / kLanes;
  auto tiles_of = [&](const Band& band) {
    return BandMatrix{reinterpret_cast<float*>(scratch + band.tiles_offset), band.first, band.count};
  };
  auto products_of = [&](const Band& band) {
    return BandMatrix{reinterpret_cast<float*>(scratch + band.products_offset), band.first, band.count};
  };

  if (p.split == WinogradSplit::kBands) {
    // Each thread takes its band through the three phases: what one phase
    // writes, the next reads from the same core's cache.
    openmp_parallel_for(p.threads, int64_t(p.bands.size()), [&](int64_t b) {
      const Band& band = p.bands[size_t(b)];
      input_span(g, src, tiles_of(band), {band.first, band.count, 0, in_groups});
      p.run_product(band, transformed_weights, scratch);
      output_span(g, p.posts, pass, products_of(band), {band.first, band.count, 0, out_groups});
    });
    return;
  }
  const Band& all = p.bands.front();
  const int64_t images = p.spec.src.dims[0];
  const RowSpans in_spans(g, images, in_groups, p.threads);
  openmp_parallel_for(p.threads, in_spans.count(),
                      [&](int64_t item) { input_span(g, src, tiles_of(all), in_spans[item]); });
  p.run_product(all, transformed_weights, scratch);
  const RowSpans out_spans(g, images, out_groups, p.threads);
  openmp_parallel_for(p.threads, out_spans.count(),
                      [&](int64_t item) { output_span(g, p.posts, pass, products_of(all), out_spans[item]); });
}

}  // namespace switchyard
