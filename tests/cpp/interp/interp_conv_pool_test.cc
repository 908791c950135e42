// Reference kernels of nn.conv2d and the pools, on a 3x3 image 0..8:
//   0 1 2
//   3 4 5
//   6 7 8
#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_conv_pool_test {

NDArray image() { return iota(DType::kFloat32, {1, 1, 3, 3}); }
NDArray one_by_one(double w) { return f32({1, 1, 1, 1}, {w}); }

TEST(InterpConv2d, SlidesTheKernel) {
  expect_array(run_op("nn.conv2d", {image(), f32({1, 1, 2, 2}, {1, 0, 0, 1})}), DType::kFloat32, {1, 1, 2, 2},
               {4, 6, 10, 12});
}

TEST(InterpConv2d, PaddingTakesOneTwoOrFourValues) {
  expect_array(run_op("nn.conv2d", {image(), one_by_one(2)}, {{"padding", ints({1})}}), DType::kFloat32,
               {1, 1, 5, 5},
               {0, 0, 0, 0, 0, 0, 0, 2, 4, 0, 0, 6, 8, 10, 0, 0, 12, 14, 16, 0, 0, 0, 0, 0, 0});
  // Two values: top and bottom 1, left and right 0.
  expect_array(run_op("nn.conv2d", {image(), one_by_one(1)}, {{"padding", ints({1, 0})}}), DType::kFloat32,
               {1, 1, 5, 3}, {0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0});
  // Four values: top 1, left 0, bottom 0, right 1.
  expect_array(run_op("nn.conv2d", {image(), one_by_one(1)}, {{"padding", ints({1, 0, 0, 1})}}), DType::kFloat32,
               {1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0});
}

TEST(InterpConv2d, StridesAndDilation) {
  expect_array(run_op("nn.conv2d", {image(), one_by_one(1)}, {{"strides", ints({2, 2})}}), DType::kFloat32,
               {1, 1, 2, 2}, {0, 2, 6, 8});
  // A 2x2 kernel dilated by 2 reads the four corners.
  expect_array(run_op("nn.conv2d", {image(), f32({1, 1, 2, 2}, {1, 1, 1, 1})}, {{"dilation", ints({2, 2})}}),
               DType::kFloat32, {1, 1, 1, 1}, {16});
}

TEST(InterpConv2d, ChannelsAndGroups) {
  NDArray data = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  expect_array(run_op("nn.conv2d", {data, f32({1, 2, 1, 1}, {1, 1})}), DType::kFloat32, {1, 1, 2, 2},
               {11, 22, 33, 44});
  // Two groups: each output channel sees only its own input channel.
  expect_array(run_op("nn.conv2d", {data, f32({2, 1, 1, 1}, {1, 2})}, {{"groups", integer(2)}}), DType::kFloat32,
               {1, 2, 2, 2}, {1, 2, 3, 4, 20, 40, 60, 80});
  EXPECT_EQ(op_error("nn.conv2d", {data, f32({2, 1, 1, 1}, {1, 2})}).kind(), ErrorKind::kType);
}

TEST(InterpPool, MaxPool) {
  expect_array(run_op("nn.max_pool2d", {image()}, {{"pool_size", ints({2, 2})}}), DType::kFloat32, {1, 1, 2, 2},
               {4, 5, 7, 8});
  AttrList strided = {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}};
  expect_array(run_op("nn.max_pool2d", {image()}, strided), DType::kFloat32, {1, 1, 1, 1}, {4});
  AttrList ceil = strided;
  ceil.push_back({"ceil_mode", boolean(true)});
  expect_array(run_op("nn.max_pool2d", {image()}, ceil), DType::kFloat32, {1, 1, 2, 2}, {4, 5, 7, 8});
}

TEST(InterpPool, MaxPoolIgnoresPadding) {
  AttrList attrs = {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}, {"padding", ints({1})}};
  expect_array(run_op("nn.max_pool2d", {image()}, attrs), DType::kFloat32, {1, 1, 2, 2}, {0, 2, 6, 8});
  // All-negative data: a zero pad would win if padding were read.
  NDArray negative = f32({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  expect_array(run_op("nn.max_pool2d", {negative}, attrs), DType::kFloat32, {1, 1, 2, 2}, {-1, -2, -4, -5});
}

TEST(InterpPool, AvgPoolCountIncludePad) {
  AttrList attrs = {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}, {"padding", ints({1})}};
  expect_array(run_op("nn.avg_pool2d", {image()}, attrs), DType::kFloat32, {1, 1, 2, 2}, {0, 1.5, 4.5, 6});
  attrs.push_back({"count_include_pad", boolean(true)});
  expect_array(run_op("nn.avg_pool2d", {image()}, attrs), DType::kFloat32, {1, 1, 2, 2}, {0, 0.75, 2.25, 6});
}

TEST(InterpPool, AvgPoolCeilModeNeverCountsTheExtraWindowPart) {
  AttrList attrs = {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}, {"ceil_mode", boolean(true)}};
  expect_array(run_op("nn.avg_pool2d", {image()}, attrs), DType::kFloat32, {1, 1, 2, 2}, {2, 3.5, 6.5, 8});
  attrs.push_back({"count_include_pad", boolean(true)});
  expect_array(run_op("nn.avg_pool2d", {image()}, attrs), DType::kFloat32, {1, 1, 2, 2}, {2, 3.5, 6.5, 8});
}

TEST(InterpPool, GlobalAvgPool) {
  NDArray data = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  expect_array(run_op("nn.global_avg_pool2d", {data}), DType::kFloat32, {1, 2, 1, 1}, {2.5, 25});
}

}  // namespace interp_conv_pool_test
}  // namespace switchyard::testing
