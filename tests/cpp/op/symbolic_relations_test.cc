// The type relations marked symbolic-aware carry symbolic dimensions
// through; every other relation is refused a symbolic argument before it
// runs (it reads static shapes).
#include "cpp/op/op_test_util.h"
#include "op/relation_helpers.h"

namespace switchyard {
namespace symbolic_relations_test {

using namespace switchyard::testing;

DimExpr n() { return DimExpr(dim_var("n")); }
DimExpr m() { return DimExpr(dim_var("m")); }
Type sym(std::vector<DimExpr> dims, DType dtype = DType::kFloat32) { return tensor_type_of_dims(std::move(dims), dtype); }

TEST(SymbolicRelations, ElementwiseKeepsAndBroadcastsSymbolicDimensions) {
  EXPECT_EQ(relate("nn.relu", {sym({n(), 8})}), sym({n(), 8}));
  EXPECT_EQ(relate("cast", {sym({n(), 8})}, {{"dtype", text("float16")}}), sym({n(), 8}, DType::kFloat16));
  EXPECT_EQ(relate("add", {sym({n(), 8}), sym({n(), 8})}), sym({n(), 8}));
  EXPECT_EQ(relate("add", {sym({n(), 8}), f32({8})}), sym({n(), 8}));
  EXPECT_EQ(relate("add", {sym({n(), 1}), f32({1, 8})}), sym({n(), 8}));
  EXPECT_EQ(relate("multiply", {f32({1, 8}), sym({n(), 1})}), sym({n(), 8}));
  EXPECT_EQ(relate("less", {sym({n()}), sym({n()})}), sym({n()}, DType::kBool));
  EXPECT_EQ(relate("where", {sym({n(), 1}, DType::kBool), f32({8}), f32({1})}), sym({n(), 8}));
  EXPECT_EQ(relate_error("add", {sym({n(), 8}), sym({m(), 8})}),
            "'add' cannot broadcast shapes (n, 8) and (m, 8) (dimension 0: n vs m): whether they are equal is known "
            "only at run time, and checking it there is not implemented yet");
  EXPECT_CONTAINS(relate_error("add", {sym({n(), 8}), f32({3, 8})}), "(dimension 0: n vs 3): whether they are equal");
}

// While an AssumedDimEqualities lives (the ONNX importer's first pass), two
// lone variables that must be equal are taken as equal and recorded; a
// product of variables, or a constant, still fails.
TEST(SymbolicRelations, AssumedEqualitiesAreRecordedNotRefused) {
  {
    AssumedDimEqualities assumed;
    EXPECT_EQ(relate("add", {sym({n(), 8}), sym({m(), 8})}), sym({n(), 8}));
    EXPECT_EQ(relate("matmul", {sym({4, n()}), sym({m(), 2})}), f32({4, 2}));
    EXPECT_EQ(relate("add", {sym({n(), 8}), sym({m(), 8})}), sym({n(), 8}));  // recorded once
    EXPECT_CONTAINS(relate_error("add", {sym({n() * DimExpr(2), 8}), sym({m(), 8})}), "cannot broadcast");
    EXPECT_CONTAINS(relate_error("add", {sym({n(), 8}), f32({3, 8})}), "(dimension 0: n vs 3)");
    ASSERT_EQ(assumed.pairs().size(), 1u);
    EXPECT_EQ(assumed.pairs()[0].first->name, "n");
    EXPECT_EQ(assumed.pairs()[0].second->name, "m");
  }
  EXPECT_CONTAINS(relate_error("add", {sym({n(), 8}), sym({m(), 8})}), "whether they are equal is known only");
}

TEST(SymbolicRelations, ProductsCarryBatchDimensions) {
  EXPECT_EQ(relate("nn.dense", {sym({n(), 196, 768}), f32({3072, 768})}), sym({n(), 196, 3072}));
  EXPECT_EQ(relate_error("nn.dense", {sym({n(), m()}), f32({4, 8})}),
            "'nn.dense': the last dimension of data must be static, got Tensor[(n, m), float32] (dimension 1 is m)");
  EXPECT_EQ(relate("matmul", {sym({n(), 12, 196, 64}), sym({n(), 12, 64, 196})}), sym({n(), 12, 196, 196}));
  EXPECT_EQ(relate("matmul", {sym({n(), 4, 8}), f32({8, 2})}), sym({n(), 4, 2}));
  EXPECT_EQ(relate("matmul", {sym({4, n()}), sym({n(), 2})}), f32({4, 2}));  // K symbolic on both sides
  EXPECT_EQ(relate_error("matmul", {sym({4, n()}), sym({m(), 2})}),
            "'matmul': a (4, n) has n columns but b (m, 2) has m rows");
  EXPECT_CONTAINS(relate_error("matmul", {sym({n(), 4, 8}), sym({m(), 8, 2})}),
                  "batch dimensions (n) of a (n, 4, 8) and (m) of b (m, 8, 2) do not broadcast (symbolic dimensions");
  EXPECT_EQ(relate("nn.batch_matmul", {sym({n(), 4, 8}), sym({n(), 2, 8})}), sym({n(), 4, 2}));
  EXPECT_EQ(relate("nn.batch_matmul", {sym({n(), 4, 8}), f32({1, 2, 8})}), sym({n(), 4, 2}));
  EXPECT_CONTAINS(relate_error("nn.batch_matmul", {sym({n(), 4, 8}), sym({m(), 2, 8})}),
                  "batch sizes differ: x (n, 4, 8) has n, y (m, 2, 8) has m");
}

TEST(SymbolicRelations, NormalisationsOverAStaticAxis) {
  EXPECT_EQ(relate("nn.softmax", {sym({n(), 12, 196, 196})}), sym({n(), 12, 196, 196}));
  EXPECT_EQ(relate("nn.layer_norm", {sym({n(), 196, 768}), f32({768}), f32({768})}), sym({n(), 196, 768}));
  EXPECT_EQ(relate("nn.bias_add", {sym({n(), 16, 4, 4}), f32({16})}), sym({n(), 16, 4, 4}));
  EXPECT_EQ(relate_error("nn.layer_norm", {sym({8, n()}), f32({8}), f32({8})}),
            "'nn.layer_norm': the channel dimension of data must be static, got Tensor[(8, n), float32] (dimension 1 "
            "is n)");
}

TEST(SymbolicRelations, ReshapeMatchesProductsAndDividesExactly) {
  Type x = sym({n(), 196, 768});
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({0, 196, 12, 64})}}), sym({n(), 196, 12, 64}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({-1, 196, 12, 64})}}), sym({n(), 196, 12, 64}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({-1, 768})}}), sym({DimExpr(196) * n(), 768}));
  EXPECT_EQ(relate("reshape", {sym({DimExpr(196) * n(), 768})}, {{"newshape", ints({-1, 196, 768})}}), x);
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({0, -1})}}), sym({n(), 150528}));
  EXPECT_EQ(relate_error("reshape", {sym({n(), 3})}, {{"newshape", ints({-1, 2})}}),
            "'reshape': cannot reshape x (n, 3) (3*n elements) to newshape [-1, 2]: 3*n is not known to be a multiple "
            "of 2");
  EXPECT_EQ(relate_error("reshape", {sym({n(), 3})}, {{"newshape", ints({6})}}),
            "'reshape': cannot reshape x (n, 3) (3*n elements) to (6) (6 elements): the counts are not known to be "
            "equal");
}

// (batch*seq, 16) to (seq, batch, 16): several symbolic dimensions move,
// which 0s and -1s cannot say, so the target names them.
TEST(SymbolicRelations, AReshapeNamingItsTargetMovesSeveralSymbolicDimensions) {
  auto dims = [](std::vector<std::string> texts) { return AttrValue(std::move(texts)); };
  const Type x = sym({m() * n(), 16});
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", dims({"n", "m", "16"})}}), sym({n(), m(), 16}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", dims({"n", "-1", "4"})}}), sym({n(), DimExpr(4) * m(), 4}));
  EXPECT_EQ(relate("reshape", {sym({n(), m(), 16})}, {{"newshape", dims({"n*m", "-1"})}}), sym({m() * n(), 16}));
  // Kept in one canonical text, and as the static attribute when every entry is a number.
  Attrs canonical = normalize_attrs(*find_op_def("reshape"), {{"newshape", dims({"n*m", "16"})}});
  EXPECT_EQ(canonical->get_strings("newshape"), (std::vector<std::string>{"m*n", "16"}));
  Attrs numbers = normalize_attrs(*find_op_def("reshape"), {{"newshape", dims({"3", "-1"})}});
  EXPECT_EQ(numbers->get_ints("newshape"), (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(relate("reshape", {f32({6, 2})}, {{"newshape", dims({"3", "4"})}}), f32({3, 4}));
  EXPECT_EQ(relate_error("reshape", {x}, {{"newshape", dims({"n", "n", "16"})}}),
            "'reshape': cannot reshape x (m*n, 16) (16*m*n elements) to (n, n, 16) (16*n*n elements): the counts are "
            "not known to be equal");
  EXPECT_EQ(relate_error("reshape", {x}, {{"newshape", dims({"-1", "n", "-1"})}}),
            "'reshape': newshape [-1, n, -1] has more than one -1 (at most one dimension is inferred)");
  EXPECT_EQ(attrs_error("reshape", {{"newshape", dims({"n", "m+1"})}}),
            "attribute 'newshape': 'm+1' is not a dimension: each factor must be an integer or a variable name, "
            "optionally with <=bound");
}

TEST(SymbolicRelations, MovementAndConcatenation) {
  EXPECT_EQ(relate("transpose", {sym({n(), 196, 12, 64})}, {{"axes", ints({0, 2, 1, 3})}}),
            sym({n(), 12, 196, 64}));
  EXPECT_EQ(relate("expand_dims", {sym({n(), 3})}, {{"axis", integer(1)}}), sym({n(), 1, 3}));
  Type pair = tuple_type({sym({n(), 2}), sym({n(), 5})});
  EXPECT_EQ(relate("concatenate", {pair}, {{"axis", integer(1)}}), sym({n(), 7}));
  EXPECT_EQ(relate_error("concatenate", {tuple_type({sym({n(), 2}), sym({m(), 2})})}, {{"axis", integer(1)}}),
            "'concatenate': field 1 (m, 2) differs from field 0 (n, 2) in dimension 0 (only axis 1 may differ)");
  EXPECT_EQ(relate_error("concatenate", {pair}, {{"axis", integer(0)}}),
            "'concatenate': field 0 (n, 2) is symbolic along the concatenated axis 0; a sum of dimensions is not "
            "supported yet");
}

TEST(SymbolicRelations, WindowsTakeASymbolicBatch) {
  Type data = sym({n(), 3, 224, 224});
  EXPECT_EQ(relate("nn.conv2d", {data, f32({64, 3, 7, 7})}, {{"strides", ints({2, 2})}, {"padding", ints({3})}}),
            sym({n(), 64, 112, 112}));
  EXPECT_EQ(relate("nn.max_pool2d", {sym({n(), 64, 112, 112})},
                   {{"pool_size", ints({3, 3})}, {"strides", ints({2, 2})}, {"padding", ints({1})}}),
            sym({n(), 64, 56, 56}));
  EXPECT_EQ(relate("nn.avg_pool2d", {sym({n(), 8, 4, 4})}, {{"pool_size", ints({2})}}), sym({n(), 8, 3, 3}));
  EXPECT_EQ(relate("nn.global_avg_pool2d", {sym({n(), 512, 7, 7})}), sym({n(), 512, 1, 1}));
  EXPECT_EQ(relate_error("nn.conv2d", {sym({n(), 3, m(), 224}), f32({64, 3, 7, 7})}),
            "'nn.conv2d': only the batch (dimension 0 of argument 0) may be symbolic yet, but argument 0 is "
            "Tensor[(n, 3, m, 224), float32] (dimension 2 is m)");
}

// What an encoder layer's import needs (issue 37, step 2): its packed
// projections sliced along the features, its normalisations' means.
TEST(SymbolicRelations, SlicesOfStaticAxesAndReductionsKeepTheOtherDimensions) {
  Type x = sym({n(), 5, 48});
  EXPECT_EQ(relate("strided_slice", {x}, {{"begin", ints({16})}, {"end", ints({32})}, {"axes", ints({2})}}),
            sym({n(), 5, 16}));
  EXPECT_EQ(relate("strided_slice", {x}, {{"begin", ints({1, 0})}, {"end", ints({3, 48})}, {"strides", ints({1, 2})},
                                          {"axes", ints({1, 2})}}),
            sym({n(), 2, 24}));
  EXPECT_EQ(relate_error("strided_slice", {x}, {{"begin", ints({0})}, {"end", ints({2})}}),
            "'strided_slice': slices symbolic dimension n (dimension 0 of (n, 5, 48)); only static dimensions may be "
            "sliced yet");
  EXPECT_EQ(relate("mean", {x}, {{"axis", ints({-1})}, {"keepdims", AttrValue(true)}}), sym({n(), 5, 1}));
  EXPECT_EQ(relate("sum", {x}, {{"axis", ints({0})}}), f32({5, 48}));
  EXPECT_EQ(relate("max", {x}, {{"axis", ints({1, 2})}}), sym({n()}));
}

// An embedding: token ids (batch, seq) index a static table; positions
// are a static table's prefix of symbolic length (position_ids[:, :seq]).
TEST(SymbolicRelations, EmbeddingsTakeSymbolicIndicesAndSlicesEndAtASymbolicDimension) {
  const Type ids = sym({n(), m()}, DType::kInt64);
  EXPECT_EQ(relate("take", {f32({100, 32}), ids}, {{"axis", integer(0)}}), sym({n(), m(), 32}));
  EXPECT_EQ(relate("take", {f32({100, 32}), ids}), sym({n(), m()}));
  EXPECT_EQ(relate("take", {sym({n(), 100}), of(DType::kInt64, {3})}, {{"axis", integer(1)}}), sym({n(), 3}));
  EXPECT_EQ(relate("take", {sym({n(), m(), 4}), of(DType::kInt64, {})}, {{"axis", integer(1)}}), sym({n(), 4}));
  EXPECT_CONTAINS(relate_error("take", {sym({n(), 4}), ids}), "takes from the flattened data (n, 4), whose size is symbolic");
  auto end = [](std::vector<std::string> texts) { return AttrValue(std::move(texts)); };
  const Type table = of(DType::kInt64, {1, 64});
  EXPECT_EQ(relate("strided_slice", {table}, {{"begin", ints({0})}, {"end", end({"m"})}, {"axes", ints({1})}}),
            sym({1, m()}, DType::kInt64));
  EXPECT_EQ(relate("strided_slice", {table}, {{"begin", ints({0, 0})}, {"end", end({"1", "m"})}}),
            sym({1, m()}, DType::kInt64));
  EXPECT_EQ(relate_error("strided_slice", {table}, {{"begin", ints({1})}, {"end", end({"m"})}, {"axes", ints({1})}}),
            "'strided_slice': ends dimension 1 at symbolic m from begin 1 with stride 1; a symbolic end needs begin 0 "
            "and stride 1 (its length is then the end)");
  EXPECT_CONTAINS(relate_error("strided_slice", {sym({n(), 4})}, {{"begin", ints({0})}, {"end", end({"m"})}}),
                  "slices symbolic dimension n (dimension 0 of (n, 4))");
}

// A padding mask (batch, 1, 1, seq) expanded over two heads, and zeros shaped like the scores.
TEST(SymbolicRelations, BroadcastToASymbolicShape) {
  auto shape = [](std::vector<std::string> texts) { return AttrValue(std::move(texts)); };
  EXPECT_EQ(relate("broadcast_to", {sym({n(), 1, 1, m()}, DType::kBool)}, {{"shape", shape({"n", "2", "1", "m"})}}),
            sym({n(), 2, 1, m()}, DType::kBool));
  EXPECT_EQ(relate("broadcast_to", {f32({})}, {{"shape", shape({"2*n", "1", "m"})}}), sym({DimExpr(2) * n(), 1, m()}));
  EXPECT_CONTAINS(relate_error("broadcast_to", {sym({n(), 1})}, {{"shape", ints({3, 1})}}),
                  "dimension 0 of x is n but the target has 3");
  EXPECT_EQ(relate_error("broadcast_to", {sym({n(), 4})}, {{"shape", shape({"m", "4"})}}),
            "'broadcast_to': cannot broadcast x (n, 4) to (m, 4): dimension 0 of x is n but the target has m (equal or "
            "1 are known to broadcast; whether they are equal is known only at run time)");
}

TEST(SymbolicRelations, OtherOperatorsRefuseSymbolicArguments) {
  EXPECT_EQ(relate_error("split", {sym({4, n()})}, {{"indices_or_sections", integer(2)}, {"axis", integer(1)}}),
            "'split': splits symbolic dimension n (dimension 1 of (4, n)); only a static dimension may be split");
  EXPECT_EQ(type_to_string(relate("split", {sym({n(), 48})}, {{"indices_or_sections", integer(3)}, {"axis", integer(1)}})),
            "(Tensor[(n, 16), float32], Tensor[(n, 16), float32], Tensor[(n, 16), float32])");
  EXPECT_CONTAINS(relate_error("squeeze", {sym({n(), 1})}), "'squeeze' does not take symbolic dimensions yet");
  // Whether each built-in says so is a property of its registration.
  for (const char* name : {"cumsum", "device_copy"})
    EXPECT_FALSE(find_op_def(name)->symbolic_shapes) << name;
}

}  // namespace symbolic_relations_test
}  // namespace switchyard
