// Which symbolic dimensions a run may split into chunks of compiled values:
// the rules keep entries apart through attention, convolutions and
// embeddings, and every operator that reduces, contracts, gathers or
// regroups across the dimension refuses with its node.
#include "analysis/chunkable_dims.h"

#include <gtest/gtest.h>

#include "ir/dim.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace chunkable_dims_test {

ChunkableDim chunking(const std::string& text, const std::string& dim) {
  IRModule typed = infer_type(parse_module(text, "m.sy"));
  const Function& main = typed.lookup("main");
  for (const Var& p : main->params)
    if (const TensorTypeNode* t = as_tensor(p->checked_type()))
      for (const DimExpr& d : t->dims)
        for (const DimVar* v : d.variables())
          if (v->name == dim) return chunkable_dim(main, v);
  ADD_FAILURE() << "no dimension " << dim;
  return {};
}

TEST(ChunkableDims, AttentionKeepsTheBatchApartThroughEveryReshape) {
  ChunkableDim c = chunking(R"(def @main(%x: Tensor[(n<=64, 196, 768), float32], %w: Tensor[(2304, 768), float32],
          %g: Tensor[(768), float32], %b: Tensor[(768), float32]) {
  %0 = nn.layer_norm(%x, %g, %b);
  %1 = nn.dense(%0, %w);
  %2 = reshape(%1, newshape=[-1, 196, 3, 12, 64]);
  %3 = transpose(%2, axes=[2, 0, 3, 1, 4]);
  %4 = add(%3, %3);
  %5 = reshape(%1, newshape=[0, 0, 36, 64]);
  %6 = transpose(%5, axes=[0, 2, 1, 3]);
  %7 = matmul(%6, transpose(%6, axes=[0, 1, 3, 2]));
  %8 = nn.softmax(%7);
  %9 = reshape(%8, newshape=[-1, 196]);
  (%8, %9, %4)
}
)", "n");
  EXPECT_EQ(c.refusal, "");
  EXPECT_EQ(c.input_axes, (std::vector<int>{0, -1, -1, -1}));
  EXPECT_EQ(c.output_axes, (std::vector<int>{0, 0, 1}));
}

// torch's multi-head attention over a sequence-first batch: heads inside the
// batch axis (4*n), then (s * n, 64) with the batch inside the rows.
constexpr const char* kSequenceFirstAttention = R"(def @main(%x: Tensor[(s, n, 64), float32], %w: Tensor[(64, 64), float32]) {
  %0 = reshape(%x, newshape=["s", "4*n", "16"]);
  %1 = transpose(%0, axes=[1, 0, 2]);
  %2 = nn.softmax(nn.batch_matmul(%1, %1));
  %3 = nn.batch_matmul(%2, %1, transpose_b=False);
  %4 = transpose(%3, axes=[1, 0, 2]);
  %5 = nn.dense(reshape(%4, newshape=["n*s", "64"]), %w);
  RESULT
}
)";

std::string with_result(const std::string& result) {
  std::string text = kSequenceFirstAttention;
  return text.replace(text.find("RESULT"), 6, result);
}

TEST(ChunkableDims, HeadsInsideTheBatchAndTheBatchInsideTheRowsKeepItApart) {
  ChunkableDim c = chunking(with_result("reshape(%5, newshape=[\"s\", \"n\", \"64\"])"), "n");
  EXPECT_EQ(c.refusal, "");
  EXPECT_EQ(c.input_axes, (std::vector<int>{1, -1}));
  EXPECT_EQ(c.output_axes, (std::vector<int>{1}));
  // (s * n, 64) as an output: a run's entries are every s-th block of rows, no one slice.
  EXPECT_EQ(chunking(with_result("%5"), "n").refusal,
            "output 0 holds the entries of n interleaved along axis 0 (outer s), so a run's entries are no one slice "
            "of it");
  // The same extent laid out in two orders cannot be added entry by entry.
  EXPECT_EQ(chunking("def @main(%a: Tensor[(n, s, 4), float32], %b: Tensor[(s, n, 4), float32]) {\n  "
                     "add(reshape(%a, newshape=[\"n*s\", \"4\"]), reshape(%b, newshape=[\"n*s\", \"4\"]))\n}\n",
                     "n")
                .refusal,
            "add(reshape(...), reshape(...)) at m.sy:2:3: broadcasting combines operands that hold the entries of n in "
            "different orders");
  // The sequence is mixed by attention.
  EXPECT_NE(chunking(with_result("%5"), "s").refusal.find("holds s more than once"), std::string::npos);
}

TEST(ChunkableDims, ConvolutionsPoolsAndEmbeddingsKeepIt) {
  ChunkableDim conv = chunking(R"(def @main(%x: Tensor[(n, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.max_pool2d(nn.relu(%0), pool_size=[2, 2], strides=[2, 2]);
  %2 = nn.global_avg_pool2d(%1);
  reshape(%2, newshape=[-1, 4])
}
)", "n");
  EXPECT_EQ(conv.refusal, "");
  EXPECT_EQ(conv.output_axes, (std::vector<int>{0}));
  ChunkableDim embedding = chunking(R"(def @main(%ids: Tensor[(n, s), int64], %table: Tensor[(100, 8), float32],
          %pos: Tensor[(1, 1, 8), float32]) {
  %0 = take(%table, %ids, axis=0);
  %1 = broadcast_to(%pos, shape=["n", "s", "8"]);
  add(%0, %1)
}
)", "n");
  EXPECT_EQ(embedding.refusal, "") << embedding.refusal;
  EXPECT_EQ(embedding.input_axes, (std::vector<int>{0, -1, -1}));
}

TEST(ChunkableDims, EveryMixingOperatorIsRefusedWithItsNode) {
  auto refusal = [](const std::string& body, const std::string& dim = "n") {
    return chunking("def @main(%x: Tensor[(n, s, 4), float32]) {\n  " + body + "\n}\n", dim).refusal;
  };
  EXPECT_EQ(refusal("nn.softmax(%x, axis=0)"), "nn.softmax(%x) at m.sy:2:3: normalises along axis 0, which holds n");
  EXPECT_EQ(refusal("sum(%x, axis=[0])"),
            "sum(%x) at m.sy:2:3: its result does not keep n though its operands do: it reduces or mixes the entries");
  EXPECT_EQ(refusal("reshape(%x, newshape=[\"s\", \"n\", \"4\"])"),
            "reshape(%x) at m.sy:2:3: reshapes (n, s, 4) to (s, n, 4), which regroups the entries of n");
  EXPECT_EQ(chunking("def @main(%a: Tensor[(4, n), float32], %b: Tensor[(n, 3), float32]) {\n  matmul(%a, %b)\n}\n", "n")
                .refusal,
            "matmul(%a, %b) at m.sy:2:3: its result does not keep n though its operands do: it reduces or mixes the "
            "entries");
  // A sequence axis under attention-like softmax is refused; the batch beside it is not.
  EXPECT_EQ(refusal("nn.softmax(%x, axis=1)", "s"), "nn.softmax(%x) at m.sy:2:3: normalises along axis 1, which holds s");
  EXPECT_EQ(refusal("nn.softmax(%x, axis=1)", "n"), "");
}

TEST(ChunkableDims, AValueCutToTheDimensionFromAConstantIsRefused) {
  // position_ids[:n]: a chunk would read the constant's first entries, not its own.
  ChunkableDim c = chunking(R"(def @main(%x: Tensor[(n, 4), float32], %p: Tensor[(64, 4), float32]) {
  %0 = strided_slice(%p, begin=[0], end=["n"], axes=[0]);
  add(%x, %0)
}
)", "n");
  EXPECT_NE(c.refusal.find("makes a value of extent n from values that do not depend on it"), std::string::npos)
      << c.refusal;
  EXPECT_TRUE(c.input_axes.empty());
}

}  // namespace chunkable_dims_test
}  // namespace switchyard
