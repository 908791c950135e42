// Type relations and attribute checks of nn.conv2d and the 2-D pools.
#include "cpp/op/op_test_util.h"
#include "op/shape_rules.h"

namespace switchyard {
namespace window_ops_test {

using namespace switchyard::testing;

TEST(WindowOps, Conv2dShapes) {
  Type data = f32({1, 3, 32, 32});
  Type weight = f32({16, 3, 3, 3});
  EXPECT_EQ(relate("nn.conv2d", {data, weight}), f32({1, 16, 30, 30}));
  EXPECT_EQ(relate("nn.conv2d", {data, weight}, {{"padding", ints({1})}}), f32({1, 16, 32, 32}));
  EXPECT_EQ(relate("nn.conv2d", {data, weight}, {{"strides", ints({2, 2})}, {"padding", ints({1, 1})}}),
            f32({1, 16, 16, 16}));
  EXPECT_EQ(relate("nn.conv2d", {data, weight}, {{"dilation", ints({2, 2})}}), f32({1, 16, 28, 28}));
  // Four values are top, left, bottom, right.
  EXPECT_EQ(relate("nn.conv2d", {data, weight}, {{"padding", ints({0, 1, 2, 3})}}), f32({1, 16, 32, 34}));
  EXPECT_EQ(relate("nn.conv2d", {data, f32({3, 1, 3, 3})}, {{"groups", integer(3)}}), f32({1, 3, 30, 30}));
  EXPECT_EQ(relate("nn.conv2d", {f32({1, 4, 8, 8}), f32({6, 2, 1, 1})},
                   {{"groups", integer(2)}, {"channels", integer(6)}, {"kernel_size", ints({1, 1})}}),
            f32({1, 6, 8, 8}));
}

TEST(WindowOps, Conv2dDefaults) {
  Attrs attrs = normalize_attrs(*find_op_def("nn.conv2d"), {});
  EXPECT_EQ(attrs->get_ints("strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attrs->get_ints("padding"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(attrs->get_ints("dilation"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attrs->get_int("groups"), 1);
  EXPECT_TRUE(attrs->is_none("channels"));
  EXPECT_TRUE(attrs->is_none("kernel_size"));
  EXPECT_EQ(attrs->get_string("data_layout"), "NCHW");
  EXPECT_EQ(attrs->get_string("kernel_layout"), "OIHW");
}

TEST(WindowOps, Conv2dTypeErrors) {
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 4, 32, 32}), f32({8, 3, 3, 3})}),
            "'nn.conv2d': data (1, 4, 32, 32) has 4 channels, so with groups=1 weight needs 4 input channels per group, "
            "but weight (8, 3, 3, 3) has 3 (weight is (O, C/groups, KH, KW))");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 4, 8, 8}), f32({6, 1, 3, 3})}, {{"groups", integer(3)}}),
            "'nn.conv2d': groups=3 does not divide the 4 input channels of data (1, 4, 8, 8)");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 4, 8, 8}), f32({5, 2, 3, 3})}, {{"groups", integer(2)}}),
            "'nn.conv2d': groups=2 does not divide the 5 output channels of weight (5, 2, 3, 3)");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({8, 3, 3, 3})}, {{"channels", integer(16)}}),
            "'nn.conv2d': channels=16 but weight (8, 3, 3, 3) has 8 output channels");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({8, 3, 3, 3})}, {{"kernel_size", ints({5, 5})}}),
            "'nn.conv2d': kernel_size=[5, 5] but weight (8, 3, 3, 3) has a 3x3 kernel");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})}, {{"dilation", ints({2, 1})}}),
            "'nn.conv2d': the window height 5 (kernel 3, dilation 2) is larger than the padded input height 4 "
            "(input 4, padding 0 + 0)");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({3, 32, 32}), f32({8, 3, 3, 3})}),
            "'nn.conv2d': argument 0 (data) must be 4-D (N, C, H, W), got Tensor[(3, 32, 32), float32]");
  EXPECT_EQ(relate_error("nn.conv2d", {f32({1, 3, 8, 8}), of(DType::kInt8, {8, 3, 3, 3})}),
            "'nn.conv2d': data is float32 but weight is int8; dtypes must match");
}

TEST(WindowOps, Conv2dAttributeChecks) {
  EXPECT_EQ(attrs_error("nn.conv2d", {{"padding", ints({1, 1, 1})}}),
            "'nn.conv2d': padding must have 1, 2 or 4 values, got [1, 1, 1]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"padding", ints({-1})}}), "'nn.conv2d': padding must not be negative, got [-1]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"strides", ints({0, 1})}}), "'nn.conv2d': strides must be positive, got [0, 1]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"strides", ints({2})}}), "'nn.conv2d': strides must have 2 values, got [2]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"dilation", ints({1, -2})}}), "'nn.conv2d': dilation must be positive, got [1, -2]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"groups", integer(0)}}), "'nn.conv2d': groups must be positive, got 0");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"channels", integer(-3)}}), "'nn.conv2d': channels must be positive, got -3");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"kernel_size", ints({3})}}), "'nn.conv2d': kernel_size must have 2 values, got [3]");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"data_layout", text("NHWC")}}),
            "'nn.conv2d': data_layout must be one of \"NCHW\", got \"NHWC\"");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"kernel_layout", text("HWIO")}}),
            "'nn.conv2d': kernel_layout must be one of \"OIHW\", got \"HWIO\"");
  EXPECT_EQ(attrs_error("nn.conv2d", {{"stride", ints({1, 1})}}),
            "operator 'nn.conv2d' has no attribute 'stride' (it takes: strides, padding, dilation, groups, channels, "
            "kernel_size, data_layout, kernel_layout)");
}

TEST(WindowOps, Pools) {
  Type data = f32({1, 3, 32, 32});
  for (const char* op : {"nn.max_pool2d", "nn.avg_pool2d"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(relate(op, {data}, {{"pool_size", ints({2})}, {"strides", ints({2, 2})}}), f32({1, 3, 16, 16}));
    EXPECT_EQ(relate(op, {data}, {{"pool_size", ints({3, 1})}}), f32({1, 3, 30, 32}));
    EXPECT_EQ(relate(op, {data}, {{"pool_size", ints({3})}, {"padding", ints({1})}}), f32({1, 3, 32, 32}));
    // Relay's ceil mode: (5 - 2 + 2 - 1) / 2 + 1 = 3, against 2 when flooring.
    EXPECT_EQ(relate(op, {f32({1, 1, 5, 5})}, {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}}), f32({1, 1, 2, 2}));
    EXPECT_EQ(relate(op, {f32({1, 1, 5, 5})},
                     {{"pool_size", ints({2, 2})}, {"strides", ints({2, 2})}, {"ceil_mode", true}}),
              f32({1, 1, 3, 3}));
    EXPECT_EQ(attrs_error(op, {}), "operator '" + std::string(op) + "' requires attribute 'pool_size' (a list of integers)");
    EXPECT_EQ(attrs_error(op, {{"pool_size", ints({2, 2, 2})}}),
              "'" + std::string(op) + "': pool_size must have 1 or 2 values, got [2, 2, 2]");
    EXPECT_EQ(attrs_error(op, {{"pool_size", ints({0})}}), "'" + std::string(op) + "': pool_size must be positive, got [0]");
    EXPECT_CONTAINS(attrs_error(op, {{"pool_size", ints({2})}, {"layout", text("NHWC")}}), "layout must be one of \"NCHW\"");
    EXPECT_CONTAINS(attrs_error(op, {{"pool_size", ints({2})}, {"strides", ints({1, 0})}}), "strides must be positive");
    EXPECT_EQ(relate_error(op, {f32({1, 1, 2, 2})}, {{"pool_size", ints({3})}}),
              "'" + std::string(op) + "': the window height 3 is larger than the padded input height 2 (input 2, padding 0 + 0)");
    EXPECT_CONTAINS(relate_error(op, {f32({3, 32, 32})}, {{"pool_size", ints({2})}}), "argument 0 (data) must be 4-D");
  }
  EXPECT_FALSE(normalize_attrs(*find_op_def("nn.avg_pool2d"), {{"pool_size", ints({2})}})->get_bool("count_include_pad"));
  EXPECT_CONTAINS(attrs_error("nn.max_pool2d", {{"pool_size", ints({2})}, {"count_include_pad", true}}),
                  "has no attribute 'count_include_pad'");
}

TEST(WindowOps, GlobalAvgPool) {
  EXPECT_EQ(relate("nn.global_avg_pool2d", {f32({2, 64, 7, 7})}), f32({2, 64, 1, 1}));
  EXPECT_CONTAINS(relate_error("nn.global_avg_pool2d", {f32({64, 7, 7})}), "argument 0 (data) must be 4-D (N, C, H, W)");
  EXPECT_CONTAINS(attrs_error("nn.global_avg_pool2d", {{"layout", text("NHWC")}}), "layout must be one of \"NCHW\"");
}

TEST(WindowOps, PaddingForms) {
  Padding2D one = expand_padding({2});
  EXPECT_EQ(one.top + one.left + one.bottom + one.right, 8);
  Padding2D two = expand_padding({1, 3});
  EXPECT_EQ(two.top, 1);
  EXPECT_EQ(two.bottom, 1);
  EXPECT_EQ(two.left, 3);
  EXPECT_EQ(two.right, 3);
  Padding2D four = expand_padding({1, 2, 3, 4});
  EXPECT_EQ(four.top, 1);
  EXPECT_EQ(four.left, 2);
  EXPECT_EQ(four.bottom, 3);
  EXPECT_EQ(four.right, 4);
}

}  // namespace window_ops_test
}  // namespace switchyard
