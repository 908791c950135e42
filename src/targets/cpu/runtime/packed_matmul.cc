#include "targets/cpu/runtime/packed_matmul.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/float8.h"
#include "runtime/runtime_error.h"
#include "targets/cpu/runtime/cpu_features.h"
#include "targets/cpu/runtime/dnnl_primitive.h"
#include "targets/cpu/runtime/primitive_post_ops.h"

namespace switchyard {
namespace {

// A register tile: 4 rows of 24 columns (12 AVX2 accumulators, 3 registers
// of B and 1 of A: all 16). A 6x16 tile, with one broadcast of A per two
// FMAs instead of per three, ran 10-30% slower here.
constexpr int64_t kRows = 4, kPanel = 24;
// The least work worth waking another thread for (about 25 us here): a
// sleeping thread on a shared two-core machine can take a millisecond to
// wake, which the MLP's 0.8-MFLOP products at two threads paid on every
// call (1.8 ms a run against 0.07 on one).
constexpr double kFlopsPerThread = 2e6;
// A byte of packed weights read costs about as long as this many flops (an
// FMA peak of ~100 GFLOP/s a core against ~12 GB/s from L3): with few rows,
// a product is the time it takes to stream its weights, and a thread with
// half of them reads half the bytes.
constexpr double kFlopsPerWeightByte = 8;
// Rows of A a thread keeps in its L2 cache while it sweeps the panels.
constexpr int64_t kBlockBytes = 256 << 10;

struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldc = 0;  // row strides of A, and of C and the residuals
  std::vector<PostOp> posts;
};

// What one call reads and writes.
struct Operands {
  const float* a = nullptr;
  const float* packed = nullptr;  // [panel][k][kPanel]
  const float* bias = nullptr;    // null when absent
  std::vector<const float*> residuals;  // by post-op; null but for sums
  float* c = nullptr;
};

// The tile's bias and post-ops, then its store: `acc` holds `rows` rows of
// kPanel sums for columns [col, col + cols).
inline __attribute__((always_inline)) void finish_tile(const Problem& p, const Operands& o, const float* acc,
                                                       int64_t row, int64_t rows, int64_t col, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const size_t at = size_t((row + r) * p.ldc + col);
    for (int64_t j = 0; j < cols; ++j) {
      float v = acc[r * kPanel + j] + (o.bias ? o.bias[col + j] : 0.0f);
      apply_post_ops(v, p.posts, o.residuals.data(), at + size_t(j));
      o.c[at + size_t(j)] = v;
    }
  }
}

// The tile's bias and post-ops on its AVX2 sums `acc` (3 registers a
// row), then its store.
template <int Rows>
__attribute__((target("avx2,fma"), always_inline)) inline void store_tile_avx2(const Problem& p, const Operands& o,
                                                                               const __m256 (&acc)[Rows][3],
                                                                               int64_t row, int64_t panel) {
  const int64_t col = panel * kPanel;
  if (col + kPanel > p.n) {  // the last panel's padding columns are not stored
    alignas(32) float sums[Rows * kPanel];
    for (int r = 0; r < Rows; ++r)
      for (int h = 0; h < 3; ++h) _mm256_store_ps(sums + r * kPanel + 8 * h, acc[r][h]);
    finish_tile(p, o, sums, row, Rows, col, p.n - col);
    return;
  }
  __m256 bias[3] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  if (o.bias)
    for (int h = 0; h < 3; ++h) bias[h] = _mm256_loadu_ps(o.bias + col + 8 * h);
  for (int r = 0; r < Rows; ++r)
    for (int h = 0; h < 3; ++h) {
      const size_t at = size_t((row + r) * p.ldc + col + 8 * h);
      Float8 v = acc[r][h] + bias[h];
      apply_post_ops(v, p.posts, o.residuals.data(), at);
      store_float8(o.c + at, v);
    }
}

#define SY_TILE_ROW(r)                                                 \
  if constexpr (Rows > r) {                                            \
    __m256 av = _mm256_broadcast_ss(a + r * lda + k);                  \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                        \
    c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                        \
    c##r##2 = _mm256_fmadd_ps(av, b2, c##r##2);                        \
  }

template <int Rows>
__attribute__((target("avx2,fma"))) void tile_avx2(const Problem& p, const Operands& o, int64_t row, int64_t panel) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00, c20 = c00, c21 = c00,
         c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  const int64_t lda = p.lda, depth = p.k;
  const float* a = o.a + row * lda;
  const float* b = o.packed + panel * depth * kPanel;
  for (int64_t k = 0; k < depth; ++k, b += kPanel) {
    __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), b2 = _mm256_load_ps(b + 16);
    SY_TILE_ROW(0) SY_TILE_ROW(1) SY_TILE_ROW(2) SY_TILE_ROW(3)
  }
#undef SY_TILE_ROW
  const __m256 all[kRows][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
  __m256 acc[Rows][3];
  for (int r = 0; r < Rows; ++r)
    for (int h = 0; h < 3; ++h) acc[r][h] = all[r][h];
  store_tile_avx2<Rows>(p, o, acc, row, panel);
}

// One row (a batch-1 dense layer, a recurrent step): its 3 sums, each a
// chain of dependent FMAs, would wait on the FMA's latency (about a third
// of the peak here), so the depth is split into kStrands strands (k modulo
// kStrands) summed apart, 12 chains in flight, added at the end. Two rows
// split so spill registers and ran slower.
__attribute__((target("avx2,fma"))) void tile_avx2_one_row(const Problem& p, const Operands& o, int64_t row,
                                                           int64_t panel) {
  constexpr int kStrands = 4;
  __m256 c[kStrands][3];
  for (int s = 0; s < kStrands; ++s)
    for (int h = 0; h < 3; ++h) c[s][h] = _mm256_setzero_ps();
  const int64_t depth = p.k;
  const float* a = o.a + row * p.lda;
  const float* b = o.packed + panel * depth * kPanel;
  int64_t k = 0;
  for (; k + kStrands <= depth; k += kStrands, b += kStrands * kPanel) {
#pragma GCC unroll 4
    for (int s = 0; s < kStrands; ++s) {
      const __m256 av = _mm256_broadcast_ss(a + k + s);
      for (int h = 0; h < 3; ++h) c[s][h] = _mm256_fmadd_ps(av, _mm256_load_ps(b + s * kPanel + 8 * h), c[s][h]);
    }
  }
  for (; k < depth; ++k, b += kPanel) {
    const __m256 av = _mm256_broadcast_ss(a + k);
    for (int h = 0; h < 3; ++h) c[0][h] = _mm256_fmadd_ps(av, _mm256_load_ps(b + 8 * h), c[0][h]);
  }
  __m256 acc[1][3];
  for (int h = 0; h < 3; ++h)
    acc[0][h] = _mm256_add_ps(_mm256_add_ps(c[0][h], c[1][h]), _mm256_add_ps(c[2][h], c[3][h]));
  store_tile_avx2<1>(p, o, acc, row, panel);
}

template <int Rows>
void tile_generic(const Problem& p, const Operands& o, int64_t row, int64_t panel) {
  float sums[Rows * kPanel] = {};
  const float* a = o.a + row * p.lda;
  const float* b = o.packed + panel * p.k * kPanel;
  for (int64_t k = 0; k < p.k; ++k, b += kPanel)
    for (int r = 0; r < Rows; ++r) {
      float av = a[r * p.lda + k];
      for (int64_t j = 0; j < kPanel; ++j) sums[r * kPanel + j] += av * b[j];
    }
  int64_t col = panel * kPanel;
  finish_tile(p, o, sums, row, Rows, col, std::min(kPanel, p.n - col));
}

using TileFn = void (*)(const Problem&, const Operands&, int64_t, int64_t);

// tiles[r - 1] computes r rows.
constexpr TileFn kAvx2Tiles[kRows] = {tile_avx2_one_row, tile_avx2<2>, tile_avx2<3>, tile_avx2<4>};
constexpr TileFn kGenericTiles[kRows] = {tile_generic<1>, tile_generic<2>, tile_generic<3>, tile_generic<4>};

bool row_major(const PrimitiveTensor& t) {
  return t.format.empty() && t.dims.size() == 2 && t.strides.size() == 2 && (t.strides[1] == 1 || t.dims[1] == 1) &&
         t.strides[0] >= t.dims[1];
}

}  // namespace

std::string packed_matmul_refusal(const PrimitiveSpec& s) {
  if (s.kind != PrimitiveKind::kMatmul) return "not a matmul";
  if (s.weights.dims.size() != 2 || s.src.dims.size() != 2) return "not a product of two matrices";
  if (!row_major(s.src) || !row_major(s.dst)) return "A or C not row-major";
  if (s.weights.strides.size() != 2 || !s.weights.format.empty()) return "weights in a blocked layout";
  if (!s.bias.empty() && (s.bias.dims != std::vector<int64_t>{1, s.dst.dims[1]} || !row_major(s.bias)))
    return "a bias other than one per column";
  std::vector<PostOp> posts;
  return read_post_ops(s, &posts);
}

bool packed_matmul_pays(const PrimitiveSpec& spec) {
  constexpr int64_t kFewRows = 8;
  return !dnnl_uses_avx512() || (!spec.src.dims.empty() && spec.src.dims[0] <= kFewRows);
}

struct PackedMatmul::Impl {
  PrimitiveSpec spec;
  Problem problem;
  const TileFn* tiles = nullptr;
  int64_t panels = 0, block_rows = 0;
};

PackedMatmul::PackedMatmul(const PrimitiveSpec& spec, Isa isa) : impl_(std::make_unique<Impl>()) {
  if (std::string why = packed_matmul_refusal(spec); !why.empty())
    throw RuntimeError("the packed matmul cannot compute " + why);
  Impl& p = *impl_;
  p.spec = spec;
  Problem& q = p.problem;
  q.m = spec.src.dims[0];
  q.k = spec.src.dims[1];
  q.n = spec.dst.dims[1];
  q.lda = spec.src.strides[0];
  q.ldc = spec.dst.strides[0];
  read_post_ops(spec, &q.posts);
  p.tiles = isa == Isa::kBest && cpu_has_avx2_fma() ? kAvx2Tiles : kGenericTiles;
  p.panels = (q.n + kPanel - 1) / kPanel;
  // As many rows of A as fill half the L2 cache, a whole number of tiles.
  int64_t rows = std::max<int64_t>(kRows, kBlockBytes / std::max<int64_t>(1, q.k * int64_t(sizeof(float))));
  p.block_rows = std::min(q.m, rows / kRows * kRows);
}

PackedMatmul::~PackedMatmul() = default;

size_t PackedMatmul::packed_weights_size() const {
  return size_t(impl_->panels * impl_->problem.k * kPanel);
}

void PackedMatmul::pack_weights(const float* weights, float* packed) const {
  pack_panels(weights, 0, impl_->panels, packed);
}

size_t PackedMatmul::panel_size() const { return size_t(impl_->problem.k * kPanel); }

void PackedMatmul::pack_panels(const void* weights, int64_t first, int64_t end, float* packed) const {
  const Impl& p = *impl_;
  const Problem& q = p.problem;
  const char* bytes = static_cast<const char*>(weights);
  const int64_t k_stride = p.spec.weights.strides[0], n_stride = p.spec.weights.strides[1];
  for (int64_t panel = first; panel < end; ++panel)
    for (int64_t k = 0; k < q.k; ++k) {
      float* out = packed + ((panel - first) * q.k + k) * kPanel;
      for (int64_t j = 0; j < kPanel; ++j) {
        int64_t col = panel * kPanel + j;
        float value = 0.0f;  // padding columns are zero
        if (col < q.n) std::memcpy(&value, bytes + (k * k_stride + col * n_stride) * sizeof(float), sizeof value);
        out[j] = value;
      }
    }
}

void PackedMatmul::execute(const void* const* inputs, void* const* outputs, const float* packed_weights,
                           const ParallelFor& parallel_for) const {
  const Impl& p = *impl_;
  const Problem& q = p.problem;
  Operands o;
  o.a = static_cast<const float*>(inputs[p.spec.src_input]);
  o.packed = packed_weights;
  o.bias = p.spec.bias.empty() ? nullptr : static_cast<const float*>(inputs[p.spec.bias_input]);
  for (const PostOp& post : q.posts)
    o.residuals.push_back(post.kind == PostOp::Kind::kSum ? static_cast<const float*>(inputs[post.input]) : nullptr);
  o.c = static_cast<float*>(outputs[0]);
  // Items are (block of rows, panel), panels innermost: a thread sweeps the
  // panels over rows that stay in its cache.
  const int64_t blocks = (q.m + p.block_rows - 1) / p.block_rows;
  const double item_weight_bytes = double(kPanel) * double(q.k) * sizeof(float);
  const double item_work = 2.0 * double(p.block_rows) * double(kPanel) * double(q.k) +
                           kFlopsPerWeightByte * item_weight_bytes;
  const int64_t grain = std::max<int64_t>(1, int64_t(kFlopsPerThread / item_work));
  parallel_for(blocks * p.panels, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t first = item / p.panels * p.block_rows, panel = item % p.panels;
      int64_t last = std::min(q.m, first + p.block_rows);
      for (int64_t row = first; row < last; row += kRows) p.tiles[std::min(kRows, last - row) - 1](q, o, row, panel);
    }
  });
}

}  // namespace switchyard
