// Type relations of the matrix products, normalisations, softmax and bias_add.
#include "cpp/op/op_test_util.h"

namespace switchyard {
namespace nn_ops_test {

using namespace switchyard::testing;

TEST(NnOps, Dense) {
  EXPECT_EQ(relate("nn.dense", {f32({8, 784}), f32({512, 784})}), f32({8, 512}));
  EXPECT_EQ(relate("nn.dense", {f32({2, 3, 4}), f32({5, 4})}, {{"units", integer(5)}}), f32({2, 3, 5}));
  EXPECT_EQ(relate("nn.dense", {f32({4}), f32({5, 4})}), f32({5}));
  EXPECT_EQ(relate_error("nn.dense", {f32({1, 784}), f32({512, 783})}),
            "'nn.dense': data has 784 columns but weight (512, 783) expects 783 (weight is (units, in_features))");
  EXPECT_EQ(relate_error("nn.dense", {f32({1, 4}), f32({5, 4})}, {{"units", integer(6)}}),
            "'nn.dense': units=6 but weight (5, 4) has 5 rows (weight is (units, in_features))");
  EXPECT_EQ(relate_error("nn.dense", {f32({1, 4}), f32({4})}),
            "'nn.dense': argument 1 (weight) must be 2-D (units, in_features), got Tensor[(4), float32]");
  EXPECT_EQ(relate_error("nn.dense", {f32({}), f32({5, 4})}),
            "'nn.dense': argument 0 (data) must have at least 1 dimension, got float32");
  EXPECT_EQ(relate_error("nn.dense", {f32({1, 4}), of(DType::kFloat16, {5, 4})}),
            "'nn.dense': data is float32 but weight is float16; dtypes must match");
  EXPECT_EQ(attrs_error("nn.dense", {{"units", integer(0)}}), "'nn.dense': units must be positive, got 0");
  EXPECT_TRUE(normalize_attrs(*find_op_def("nn.dense"), {})->is_none("units"));
}

TEST(NnOps, MatmulFollowsNumpy) {
  EXPECT_EQ(relate("matmul", {f32({2, 3}), f32({3, 4})}), f32({2, 4}));
  EXPECT_EQ(relate("matmul", {f32({3}), f32({3})}), f32({}));
  EXPECT_EQ(relate("matmul", {f32({3}), f32({5, 3, 4})}), f32({5, 4}));
  EXPECT_EQ(relate("matmul", {f32({5, 2, 3}), f32({3})}), f32({5, 2}));
  EXPECT_EQ(relate("matmul", {f32({7, 1, 2, 3}), f32({5, 3, 4})}), f32({7, 5, 2, 4}));
  EXPECT_EQ(relate_error("matmul", {f32({2, 3}), f32({4, 5})}), "'matmul': a (2, 3) has 3 columns but b (4, 5) has 4 rows");
  EXPECT_EQ(relate_error("matmul", {f32({2, 2, 3}), f32({3, 3, 4})}),
            "'matmul': batch dimensions (2) of a (2, 2, 3) and (3) of b (3, 3, 4) do not broadcast");
  EXPECT_CONTAINS(relate_error("matmul", {f32({}), f32({3})}), "argument 0 (a) must have at least 1 dimension");
}

TEST(NnOps, BatchMatmul) {
  EXPECT_EQ(relate("nn.batch_matmul", {f32({2, 3, 4}), f32({2, 5, 4})}), f32({2, 3, 5}));
  EXPECT_EQ(relate("nn.batch_matmul", {f32({1, 3, 4}), f32({6, 4, 5})}, {{"transpose_b", false}}), f32({6, 3, 5}));
  EXPECT_EQ(relate("nn.batch_matmul", {f32({2, 4, 3}), f32({2, 5, 4})}, {{"transpose_a", true}}), f32({2, 3, 5}));
  EXPECT_EQ(relate_error("nn.batch_matmul", {f32({2, 3, 4}), f32({2, 4, 5})}),
            "'nn.batch_matmul': x (2, 3, 4) gives K=4 but y (2, 4, 5) gives K=5 (transpose_a=False: x is (B, M, K); "
            "transpose_b=True: y is (B, N, K))");
  EXPECT_EQ(relate_error("nn.batch_matmul", {f32({2, 3, 4}), f32({3, 5, 4})}),
            "'nn.batch_matmul': batch sizes differ: x (2, 3, 4) has 2, y (3, 5, 4) has 3 (one of them may be 1)");
  EXPECT_EQ(relate_error("nn.batch_matmul", {f32({3, 4}), f32({2, 5, 4})}),
            "'nn.batch_matmul': argument 0 (x) must be 3-D (B, M, K), got Tensor[(3, 4), float32]");
  EXPECT_CONTAINS(attrs_error("nn.batch_matmul", {{"transpose_a", integer(2)}}), "must be a boolean");
}

TEST(NnOps, Softmax) {
  EXPECT_EQ(relate("nn.softmax", {f32({2, 10})}), f32({2, 10}));
  EXPECT_EQ(relate("nn.softmax", {f32({2, 10})}, {{"axis", integer(0)}}), f32({2, 10}));
  EXPECT_EQ(relate_error("nn.softmax", {f32({2, 10})}, {{"axis", integer(2)}}), "'nn.softmax': axis 2 is out of range for rank 2");
  EXPECT_EQ(relate_error("nn.softmax", {of(DType::kInt32, {4})}),
            "'nn.softmax': argument 0 (x) must have a floating-point dtype, got int32");
}

TEST(NnOps, LayerNorm) {
  EXPECT_EQ(relate("nn.layer_norm", {f32({2, 8}), f32({8}), f32({8})}), f32({2, 8}));
  EXPECT_EQ(relate("nn.layer_norm", {f32({2, 8}), f32({2}), f32({2})}, {{"axis", integer(0)}}), f32({2, 8}));
  EXPECT_EQ(relate_error("nn.layer_norm", {f32({2, 8}), f32({4}), f32({8})}),
            "'nn.layer_norm': argument 1 (gamma) must have shape (8) to match dimension 1 of data (2, 8), got (4)");
  EXPECT_CONTAINS(relate_error("nn.layer_norm", {f32({2, 8}), f32({8}), f32({8, 1})}), "argument 2 (beta) must have shape (8)");
  EXPECT_EQ(attrs_error("nn.layer_norm", {{"epsilon", -1.0}}), "'nn.layer_norm': epsilon must not be negative, got -1.0");
  Attrs defaults = normalize_attrs(*find_op_def("nn.layer_norm"), {});
  EXPECT_EQ(defaults->get_int("axis"), -1);
  EXPECT_EQ(defaults->get_float("epsilon"), 1e-5);
  EXPECT_TRUE(defaults->get_bool("center"));
  EXPECT_TRUE(defaults->get_bool("scale"));
}

TEST(NnOps, BatchNormReturnsATuple) {
  Type c = f32({3});
  EXPECT_EQ(type_str(relate("nn.batch_norm", {f32({1, 3, 4, 4}), c, c, c, c})),
            "(Tensor[(1, 3, 4, 4), float32], Tensor[(3), float32], Tensor[(3), float32])");
  EXPECT_EQ(relate_error("nn.batch_norm", {f32({1, 3, 4, 4}), c, c, f32({4}), c}),
            "'nn.batch_norm': argument 3 (moving_mean) must have shape (3) to match dimension 1 of data (1, 3, 4, 4), "
            "got (4)");
  EXPECT_CONTAINS(relate_error("nn.batch_norm", {f32({1, 3, 4, 4}), c, c, c, of(DType::kFloat16, {3})}),
                  "data is float32 but moving_var is float16");
  EXPECT_EQ(normalize_attrs(*find_op_def("nn.batch_norm"), {})->get_int("axis"), 1);
  EXPECT_EQ(find_op_def("nn.batch_norm")->num_inputs, 5);
}

TEST(NnOps, BiasAdd) {
  EXPECT_EQ(relate("nn.bias_add", {f32({2, 16, 5, 5}), f32({16})}), f32({2, 16, 5, 5}));
  EXPECT_EQ(relate("nn.bias_add", {f32({2, 10}), f32({10})}, {{"axis", integer(-1)}}), f32({2, 10}));
  EXPECT_EQ(relate_error("nn.bias_add", {f32({2, 16}), f32({10})}),
            "'nn.bias_add': argument 1 (bias) must have shape (16) to match dimension 1 of data (2, 16), got (10)");
  EXPECT_EQ(relate_error("nn.bias_add", {f32({16}), f32({16})}), "'nn.bias_add': axis 1 is out of range for rank 1");
  EXPECT_EQ(find_op_def("nn.bias_add")->pattern, OpPattern::kBroadcast);
}

}  // namespace nn_ops_test
}  // namespace switchyard
