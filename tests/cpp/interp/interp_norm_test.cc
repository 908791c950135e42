// Reference kernels of nn.softmax, nn.layer_norm, nn.batch_norm and nn.bias_add.
#include <cmath>

#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_norm_test {

TEST(InterpNorm, SoftmaxAlongAnAxis) {
  double ln3 = std::log(3.0);
  expect_near_array(run_op("nn.softmax", {f32({2, 2}, {0, ln3, 0, 0})}), {2, 2}, {0.25, 0.75, 0.5, 0.5});
  expect_near_array(run_op("nn.softmax", {f32({2, 2}, {0, 0, ln3, 0})}, {{"axis", integer(0)}}), {2, 2},
                    {0.25, 0.5, 0.75, 0.5});
}

TEST(InterpNorm, SoftmaxIsStableForLargeInputs) {
  // exp(1000) overflows; subtracting the max first keeps it exact.
  expect_array(run_op("nn.softmax", {f32({2}, {1000, 1000})}), DType::kFloat32, {2}, {0.5, 0.5});
}

TEST(InterpNorm, LayerNorm) {
  double inv_std = 1.0 / std::sqrt(1.0 + 1e-5);  // mean 2, variance 1, default epsilon
  NDArray data = f32({1, 2}, {1, 3});
  expect_near_array(run_op("nn.layer_norm", {data, f32({2}, {2, 3}), f32({2}, {10, 20})}), {1, 2},
                    {10 - 2 * inv_std, 20 + 3 * inv_std});
  expect_near_array(run_op("nn.layer_norm", {data, f32({2}, {2, 3}), f32({2}, {10, 20})},
                           {{"center", boolean(false)}, {"scale", boolean(false)}}),
                    {1, 2}, {-inv_std, inv_std});
  expect_near_array(run_op("nn.layer_norm", {f32({2, 1}, {1, 3}), f32({2}, {1, 1}), f32({2}, {0, 0})},
                           {{"axis", integer(0)}}),
                    {2, 1}, {-inv_std, inv_std});
}

TEST(InterpNorm, BatchNormReturnsOutputAndMovingStatistics) {
  NDArray data = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  NDArray mean = f32({2}, {1, 3}), var = f32({2}, {4, 1});
  Value v = run_call("nn.batch_norm", {data, f32({2}, {1, 2}), f32({2}, {0, 1}), mean, var});
  ASSERT_TRUE(v.is_tuple());
  ASSERT_EQ(v.fields.size(), 3u);
  double s0 = 1.0 / std::sqrt(4 + 1e-5), s1 = 1.0 / std::sqrt(1 + 1e-5);
  expect_near_array(v.fields[0].tensor, {1, 2, 1, 2}, {0, s0, 1, 2 * s1 + 1});
  expect_array(v.fields[1].tensor, DType::kFloat32, {2}, {1, 3});
  expect_array(v.fields[2].tensor, DType::kFloat32, {2}, {4, 1});
}

TEST(InterpNorm, BiasAddAlongAxis) {
  NDArray data = iota(DType::kFloat32, {2, 3});
  expect_array(run_op("nn.bias_add", {data, f32({2}, {10, 20})}, {{"axis", integer(0)}}), DType::kFloat32, {2, 3},
               {10, 11, 12, 23, 24, 25});
  expect_array(run_op("nn.bias_add", {data, f32({3}, {1, 2, 3})}, {{"axis", integer(-1)}}), DType::kFloat32, {2, 3},
               {1, 3, 5, 4, 6, 8});
  expect_array(run_op("nn.bias_add", {iota(DType::kFloat32, {1, 2, 2}), f32({2}, {10, 20})}), DType::kFloat32,
               {1, 2, 2}, {10, 11, 22, 23});
  EXPECT_EQ(op_error("nn.bias_add", {data, f32({2}, {1, 2})}).message(),
            "'nn.bias_add': bias must have shape (3), got Tensor[(2), float32]");
}

}  // namespace interp_norm_test
}  // namespace switchyard::testing
