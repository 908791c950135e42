// The runtime's packed matmul against double-precision loops: every row
// and column remainder of its 4x24 tiles, both weight layouts, the bias and
// post-ops (a residual added in place too), a pool of one and of two
// threads, its AVX2 code and its plain x86-64 code.
#include "targets/cpu/runtime/packed_matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "primitive_buffers.h"
#include "runtime/runtime_error.h"
#include "runtime/thread_pool.h"
#include "targets/cpu/runtime/dnnl_primitive.h"

namespace switchyard {
namespace packed_matmul_test {

using testing::random_values;
using testing::Workspace;

PrimitivePostOp eltwise(const char* algorithm, float alpha, float beta) {
  PrimitivePostOp p;
  p.algorithm = algorithm;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// C[m][n] = A[m][k] · B[k][n] (+ bias) with post-ops; `columns` stores B
// column by column (each output's weights contiguous), as nn.dense does.
PrimitiveSpec product(int64_t m, int64_t k, int64_t n, bool columns, bool bias, std::vector<PrimitivePostOp> posts) {
  PrimitiveSpec s;
  s.kind = PrimitiveKind::kMatmul;
  s.algorithm = kPackedMatmulAlgorithm;
  s.src = {{m, k}, {k, 1}};
  s.weights = {{k, n}, columns ? std::vector<int64_t>{1, k} : std::vector<int64_t>{n, 1}};
  s.dst = {{m, n}, {n, 1}};
  s.src_input = 0;
  s.weights_input = 1;
  if (bias) {
    s.bias = {{1, n}, {n, 1}};
    s.bias_input = 2;
  }
  s.any_weights_layout = true;
  s.post_ops = std::move(posts);
  return s;
}

// The spec with a residual (input 3) added last.
PrimitiveSpec with_residual(PrimitiveSpec s) {
  PrimitivePostOp sum;
  sum.kind = PrimitivePostOp::Kind::kSum;
  sum.input = 3;
  sum.operand = s.dst;
  s.post_ops.push_back(sum);
  return s;
}

std::vector<double> reference(const PrimitiveSpec& s, const std::vector<float>& a, const std::vector<float>& b,
                              const std::vector<float>& bias, const std::vector<float>& residual) {
  const int64_t m = s.src.dims[0], k = s.src.dims[1], n = s.dst.dims[1];
  std::vector<double> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = s.bias.empty() ? 0.0 : bias[size_t(j)];
      for (int64_t l = 0; l < k; ++l)
        v += double(a[size_t(i * k + l)]) * b[size_t(l * s.weights.strides[0] + j * s.weights.strides[1])];
      for (const PrimitivePostOp& p : s.post_ops) {
        if (p.kind == PrimitivePostOp::Kind::kSum) v += residual[size_t(i * n + j)];
        else if (p.algorithm == "eltwise_relu") v = v > 0 ? v : p.alpha * v;
        else if (p.algorithm == "eltwise_clip") v = std::min(std::max(v, double(p.alpha)), double(p.beta));
        else if (p.algorithm == "eltwise_linear") v = p.alpha * v + p.beta;
      }
      c[size_t(i * n + j)] = v;
    }
  return c;
}

// Runs `s` as the runtime does (made, weights packed once, executed) and
// compares with the loops; `in_place` writes C over the residual.
void expect_matches_reference(const PrimitiveSpec& s, int threads, PackedMatmul::Isa isa, bool in_place = false) {
  const int64_t m = s.src.dims[0], k = s.src.dims[1], n = s.dst.dims[1];
  std::vector<float> a = random_values(size_t(m * k), 1), b = random_values(size_t(k * n), 2),
                     bias = random_values(size_t(n), 3), residual = random_values(size_t(m * n), 4);
  std::vector<double> expected = reference(s, a, b, bias, residual);
  PackedMatmul matmul(s, isa);
  Workspace packed(matmul.packed_weights_size() * sizeof(float));
  matmul.pack_weights(b.data(), static_cast<float*>(packed.get()));
  std::vector<float> c(size_t(m * n), -7.0f);
  const void* inputs[] = {a.data(), b.data(), bias.data(), residual.data()};
  void* outputs[] = {in_place ? residual.data() : c.data()};
  ThreadPool pool(threads);
  matmul.execute(inputs, outputs, static_cast<const float*>(packed.get()),
                 [&](int64_t n, int64_t grain, const ParallelBody& body) { pool.parallel_for(n, grain, body); });
  const std::vector<float>& out = in_place ? residual : c;
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], expected[i], 1e-5 * std::max(1.0, double(k))) << "element " << i;
}

TEST(PackedMatmul, MatchesLoopsForEveryRemainderOfItsTiles) {
  struct Shape {
    int64_t m, k, n;
  };
  for (Shape sh : {Shape{1, 1, 1}, Shape{1, 784, 50}, Shape{1, 7, 30}, Shape{3, 7, 23}, Shape{4, 16, 24},
                   Shape{5, 33, 25}, Shape{13, 64, 48}, Shape{130, 300, 70}})
    for (bool columns : {false, true})
      for (int threads : {1, 2})
        for (auto isa : {PackedMatmul::Isa::kBest, PackedMatmul::Isa::kGeneric}) {
          SCOPED_TRACE(::testing::Message() << sh.m << "x" << sh.k << "x" << sh.n << (columns ? " columns" : " rows")
                                          << ", " << threads << " threads, "
                                          << (isa == PackedMatmul::Isa::kBest ? "best" : "generic"));
          expect_matches_reference(product(sh.m, sh.k, sh.n, columns, true, {}), threads, isa);
        }
}

// The compiler writes a large weight's packing panel range by panel range,
// read where the model file lies (any byte): the pieces, put together, are
// the whole packing, for both weight layouts and a last panel of padding.
TEST(PackedMatmul, PanelRangesFromAnUnalignedSourceMakeTheWholePacking) {
  for (bool columns : {false, true}) {
    const PrimitiveSpec s = product(1, 37, 70, columns, false, {});
    PackedMatmul matmul(s);
    const std::vector<float> b = random_values(size_t(37 * 70), 5);
    std::vector<float> whole(matmul.packed_weights_size(), -1.0f);
    matmul.pack_weights(b.data(), whole.data());
    std::vector<char> unaligned(b.size() * sizeof(float) + 3);
    std::memcpy(unaligned.data() + 3, b.data(), b.size() * sizeof(float));
    const int64_t panels = int64_t(matmul.packed_weights_size() / matmul.panel_size());
    ASSERT_EQ(panels, 3);
    std::vector<float> pieces(matmul.packed_weights_size(), -2.0f);
    matmul.pack_panels(unaligned.data() + 3, 0, 2, pieces.data());
    matmul.pack_panels(unaligned.data() + 3, 2, 3, pieces.data() + 2 * matmul.panel_size());
    EXPECT_EQ(pieces, whole) << (columns ? "columns" : "rows");
  }
}

TEST(PackedMatmul, FusesReluClipLinearAndAResidualAddedInPlace) {
  for (auto isa : {PackedMatmul::Isa::kBest, PackedMatmul::Isa::kGeneric}) {
    expect_matches_reference(product(9, 40, 50, true, false, {eltwise("eltwise_relu", 0, 0)}), 1, isa);
    expect_matches_reference(product(9, 40, 50, true, true, {eltwise("eltwise_relu", 0.1f, 0)}), 2, isa);
    expect_matches_reference(
        product(9, 40, 50, false, true, {eltwise("eltwise_linear", 0.5f, 0.25f), eltwise("eltwise_clip", -1, 0.6f)}),
        1, isa);
    PrimitiveSpec residual = with_residual(product(9, 40, 50, true, true, {eltwise("eltwise_relu", 0, 0)}));
    expect_matches_reference(residual, 2, isa);
    expect_matches_reference(residual, 2, isa, /*in_place=*/true);
  }
}

TEST(PackedMatmul, RefusesWhatItDoesNotCompute) {
  auto refusal = [](const std::function<void(PrimitiveSpec&)>& change) {
    PrimitiveSpec s = product(8, 16, 24, true, true, {});
    change(s);
    return packed_matmul_refusal(s);
  };
  EXPECT_EQ(refusal([](PrimitiveSpec&) {}), "");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) {
              s.src = {{2, 8, 16}, {128, 16, 1}};
              s.weights = {{2, 16, 24}, {384, 24, 1}};
            }),
            "not a product of two matrices");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.src.strides = {1, 8}; }), "A or C not row-major");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.weights.format = "BA16a64b"; }), "weights in a blocked layout");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.bias = {{8, 24}, {24, 1}}; }), "a bias other than one per column");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) { s.post_ops = {eltwise("eltwise_gelu_erf", 0, 0)}; }),
            "the post-op eltwise_gelu_erf");
  EXPECT_EQ(refusal([](PrimitiveSpec& s) {
              s = with_residual(s);
              s.post_ops.back().operand.strides = {1, 8};
            }),
            "a residual laid out unlike the destination");
  PrimitiveSpec s = product(8, 16, 24, true, true, {});
  s.src.strides = {1, 8};
  try {
    DnnlPrimitive primitive(s, 1);
    FAIL() << "made";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("the packed matmul cannot compute A or C not row-major"), std::string::npos)
        << e.what();
  }
}

// Through the runtime's primitive: weights are packed by prepare_weights,
// and a call without them is refused rather than reading plain weights.
TEST(PackedMatmul, RunsAsAPrimitiveOnlyWithPreparedWeights) {
  PrimitiveSpec s = product(6, 20, 30, true, true, {eltwise("eltwise_relu", 0, 0)});
  DnnlPrimitive primitive(s, 1);
  EXPECT_TRUE(primitive.needs_prepared_weights());
  std::vector<float> a = random_values(6 * 20, 1), b = random_values(20 * 30, 2), bias = random_values(30, 3);
  std::vector<double> expected = reference(s, a, b, bias, {});
  Workspace workspace(primitive.workspace_bytes());
  std::vector<float> c(6 * 30);
  const void* inputs[] = {a.data(), b.data(), bias.data()};
  void* outputs[] = {c.data()};
  EXPECT_THROW(primitive.execute(inputs, outputs, nullptr, nullptr, workspace.get()), RuntimeError);
  std::shared_ptr<const PreparedWeights> packed = primitive.prepare_weights(b.data());
  primitive.execute(inputs, outputs, packed.get(), nullptr, workspace.get());  // serially, without a pool
  for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], expected[i], 1e-4) << "element " << i;
  std::fill(c.begin(), c.end(), 0.0f);
  ThreadPool pool(2);
  primitive.execute(inputs, outputs, packed.get(), nullptr, workspace.get(),
                    [&](int64_t n, int64_t grain, const ParallelBody& body) { pool.parallel_for(n, grain, body); });
  for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], expected[i], 1e-4) << "element " << i;
}

}  // namespace packed_matmul_test
}  // namespace switchyard
