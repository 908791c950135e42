// Reference kernels of nn.dense, matmul and nn.batch_matmul.
#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_linear_test {

TEST(InterpLinear, DenseIsDataTimesWeightTransposed) {
  NDArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray w = f32({2, 3}, {1, 0, -1, 0.5, 0.5, 0.5});
  expect_array(run_op("nn.dense", {x, w}), DType::kFloat32, {2, 2}, {-2, 3, -2, 7.5});
  expect_array(run_op("nn.dense", {x.reshaped({2, 1, 3}), w}, {{"units", integer(2)}}), DType::kFloat32, {2, 1, 2},
               {-2, 3, -2, 7.5});
  expect_array(run_op("nn.dense", {array(DType::kInt32, {1, 2}, {2, 3}), array(DType::kInt32, {1, 2}, {4, 5})}),
               DType::kInt32, {1, 1}, {23});
}

TEST(InterpLinear, HalfPrecisionSumsInWideTypesAndRoundsOnce) {
  // 2048 + 1 + 1: summed in float16 each step would stay 2048; summed wide it is 2050.
  NDArray x = array(DType::kFloat16, {1, 3}, {2048, 1, 1});
  NDArray w = array(DType::kFloat16, {1, 3}, {1, 1, 1});
  expect_array(run_op("nn.dense", {x, w}), DType::kFloat16, {1, 1}, {2050});
}

TEST(InterpLinear, DenseRejectsMismatches) {
  NDArray x = f32({1, 3}, {1, 2, 3});
  EXPECT_EQ(op_error("nn.dense", {x, f32({2, 2}, {1, 2, 3, 4})}).message(),
            "'nn.dense': data (1, 3) and weight (2, 2) disagree on K");
  EXPECT_EQ(op_error("nn.dense", {x, f32({1, 3}, {1, 2, 3})}, {{"units", integer(3)}}).message(),
            "'nn.dense': units=3 but the weight has 1 rows");
}

TEST(InterpLinear, MatmulFollowsNumPy) {
  NDArray a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  expect_array(run_op("matmul", {a, b}), DType::kFloat32, {2, 2}, {19, 22, 43, 50});
  // 1-D on the left is a row, dropped from the result.
  expect_array(run_op("matmul", {f32({2}, {1, 2}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}), DType::kFloat32, {3},
               {9, 12, 15});
  // 1-D on the right is a column, dropped from the result.
  expect_array(run_op("matmul", {a, f32({2}, {1, 1})}), DType::kFloat32, {2}, {3, 7});
  // Two vectors give their dot product as a 0-d tensor.
  expect_array(run_op("matmul", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}), DType::kFloat32, {}, {32});
}

TEST(InterpLinear, MatmulBroadcastsBatchDimensions) {
  expect_array(run_op("matmul", {f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 1}, {10, 100})}), DType::kFloat32, {2, 1, 1},
               {210, 430});
  NDArray stacked = iota(DType::kFloat32, {2, 2, 2});
  NDArray identity = f32({1, 2, 2}, {1, 0, 0, 1});
  expect_array(run_op("matmul", {stacked, identity}), DType::kFloat32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(op_error("matmul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}).kind(),
            ErrorKind::kType);
}

TEST(InterpLinear, BatchMatmulTransposes) {
  NDArray x = f32({1, 2, 2}, {1, 2, 3, 4}), y = f32({1, 2, 2}, {5, 6, 7, 8});
  expect_array(run_op("nn.batch_matmul", {x, y}), DType::kFloat32, {1, 2, 2}, {17, 23, 39, 53});
  expect_array(run_op("nn.batch_matmul", {x, y}, {{"transpose_b", boolean(false)}}), DType::kFloat32, {1, 2, 2},
               {19, 22, 43, 50});
  expect_array(run_op("nn.batch_matmul", {x, y}, {{"transpose_a", boolean(true)}, {"transpose_b", boolean(false)}}),
               DType::kFloat32, {1, 2, 2}, {26, 30, 38, 44});
}

TEST(InterpLinear, BatchMatmulBroadcastsBatchOfOne) {
  NDArray x = f32({2, 1, 2}, {1, 2, 3, 4}), y = f32({1, 1, 2}, {10, 100});
  expect_array(run_op("nn.batch_matmul", {x, y}), DType::kFloat32, {2, 1, 1}, {210, 430});
}

}  // namespace interp_linear_test
}  // namespace switchyard::testing
