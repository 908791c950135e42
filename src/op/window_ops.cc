// Sliding-window anchor operators on NCHW data: nn.conv2d and the 2-D pools.
#include "op/builtin_ops.h"
#include "op/registry.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

Type conv2d_relation(const std::vector<Type>& args, const AttrsNode& attrs) {
  const std::string op = "nn.conv2d";
  const TensorTypeNode& data = expect_rank(args, 0, 4, op, "data", "(N, C, H, W)");
  const TensorTypeNode& weight = expect_rank(args, 1, 4, op, "weight", "(O, C/groups, KH, KW)");
  if (data.dtype != weight.dtype)
    type_fail(op, "data is " + std::string(dtype_name(data.dtype)) + " but weight is " + dtype_name(weight.dtype) +
                      "; dtypes must match");
  int64_t groups = attrs.get_int("groups");
  int64_t channels = data.shape[1], out_channels = weight.shape[0];
  if (channels % groups != 0)
    type_fail(op, "groups=" + std::to_string(groups) + " does not divide the " + std::to_string(channels) +
                      " input channels of data " + shape_str(data.shape));
  if (out_channels % groups != 0)
    type_fail(op, "groups=" + std::to_string(groups) + " does not divide the " + std::to_string(out_channels) +
                      " output channels of weight " + shape_str(weight.shape));
  if (weight.shape[1] != channels / groups)
    type_fail(op, "data " + shape_str(data.shape) + " has " + std::to_string(channels) + " channels, so with groups=" +
                      std::to_string(groups) + " weight needs " + std::to_string(channels / groups) +
                      " input channels per group, but weight " + shape_str(weight.shape) + " has " +
                      std::to_string(weight.shape[1]) + " (weight is (O, C/groups, KH, KW))");
  if (!attrs.is_none("channels") && attrs.get_int("channels") != out_channels)
    type_fail(op, "channels=" + std::to_string(attrs.get_int("channels")) + " but weight " + shape_str(weight.shape) +
                      " has " + std::to_string(out_channels) + " output channels");
  if (!attrs.is_none("kernel_size")) {
    const std::vector<int64_t>& kernel = attrs.get_ints("kernel_size");
    if (kernel[0] != weight.shape[2] || kernel[1] != weight.shape[3])
      type_fail(op, "kernel_size=" + ints_str(kernel) + " but weight " + shape_str(weight.shape) + " has a " +
                        std::to_string(weight.shape[2]) + "x" + std::to_string(weight.shape[3]) + " kernel");
  }
  Padding2D pad = expand_padding(attrs.get_ints("padding"));
  const std::vector<int64_t>& strides = attrs.get_ints("strides");
  const std::vector<int64_t>& dilation = attrs.get_ints("dilation");
  int64_t height = window_output_extent(data.shape[2], pad.top, pad.bottom, weight.shape[2], strides[0], dilation[0],
                                        false, op, "height");
  int64_t width = window_output_extent(data.shape[3], pad.left, pad.right, weight.shape[3], strides[1], dilation[1],
                                       false, op, "width");
  return tensor_type({data.shape[0], out_channels, height, width}, data.dtype);
}

Type pool2d_relation(const std::string& op, const std::vector<Type>& args, const AttrsNode& attrs) {
  const TensorTypeNode& data = expect_rank(args, 0, 4, op, "data", "(N, C, H, W)");
  auto [pool_height, pool_width] = expand_pair(attrs.get_ints("pool_size"));
  Padding2D pad = expand_padding(attrs.get_ints("padding"));
  const std::vector<int64_t>& strides = attrs.get_ints("strides");
  const std::vector<int64_t>& dilation = attrs.get_ints("dilation");
  bool ceil_mode = attrs.get_bool("ceil_mode");
  int64_t height = window_output_extent(data.shape[2], pad.top, pad.bottom, pool_height, strides[0], dilation[0],
                                        ceil_mode, op, "height");
  int64_t width = window_output_extent(data.shape[3], pad.left, pad.right, pool_width, strides[1], dilation[1],
                                       ceil_mode, op, "width");
  return tensor_type({data.shape[0], data.shape[1], height, width}, data.dtype);
}

std::vector<AttrSpec> pool_attrs(bool average) {
  std::vector<AttrSpec> attrs = {{"pool_size", AttrKind::kInts, AttrValue()},
                                 {"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                                 {"dilation", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                                 {"padding", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0})},
                                 {"layout", AttrKind::kString, AttrValue(std::string("NCHW"))},
                                 {"ceil_mode", AttrKind::kBool, AttrValue(false)}};
  if (average) attrs.push_back({"count_include_pad", AttrKind::kBool, AttrValue(false)});
  return attrs;
}

void register_pool(const std::string& op, bool average, const std::string& doc) {
  register_op({.name = op,
               .num_inputs = 1,
               .attrs = pool_attrs(average),
               .type_relation =
                   [op](const std::vector<Type>& args, const AttrsNode& attrs) {
                     return with_symbolic_batch(
                         args, 0, op, [&](const std::vector<Type>& a) { return pool2d_relation(op, a, attrs); });
                   },
               .pattern = OpPattern::kAnchor,
               .check_attrs =
                   [op](const AttrsNode& attrs) {
                     check_length(op, "pool_size", attrs.get_ints("pool_size"), {1, 2});
                     check_positive(op, "pool_size", attrs.get_ints("pool_size"));
                     check_window_attrs(op, attrs);
                     check_one_of(op, "layout", attrs.get_string("layout"), {"NCHW"});
                   },
               .doc = doc,
               .symbolic_shapes = true});
}

}  // namespace

void register_window_ops() {
  register_op({.name = "nn.conv2d",
               .num_inputs = 2,
               .attrs = {{"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                         {"padding", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0})},
                         {"dilation", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1})},
                         {"groups", AttrKind::kInt, AttrValue(int64_t(1))},
                         {"channels", AttrKind::kInt, AttrValue(), true},
                         {"kernel_size", AttrKind::kInts, AttrValue(), true},
                         {"data_layout", AttrKind::kString, AttrValue(std::string("NCHW"))},
                         {"kernel_layout", AttrKind::kString, AttrValue(std::string("OIHW"))}},
               .type_relation =
                   [](const std::vector<Type>& args, const AttrsNode& attrs) {
                     return with_symbolic_batch(args, 0, "nn.conv2d",
                                                [&](const std::vector<Type>& a) { return conv2d_relation(a, attrs); });
                   },
               .pattern = OpPattern::kAnchor,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     const std::string op = "nn.conv2d";
                     check_window_attrs(op, attrs);
                     if (attrs.get_int("groups") <= 0)
                       type_fail(op, "groups must be positive, got " + std::to_string(attrs.get_int("groups")));
                     if (!attrs.is_none("channels") && attrs.get_int("channels") <= 0)
                       type_fail(op, "channels must be positive, got " + std::to_string(attrs.get_int("channels")));
                     if (!attrs.is_none("kernel_size")) {
                       check_length(op, "kernel_size", attrs.get_ints("kernel_size"), {2});
                       check_positive(op, "kernel_size", attrs.get_ints("kernel_size"));
                     }
                     check_one_of(op, "data_layout", attrs.get_string("data_layout"), {"NCHW"});
                     check_one_of(op, "kernel_layout", attrs.get_string("kernel_layout"), {"OIHW"});
                   },
               .doc = "2-D convolution, NCHW data and OIHW weight",
               .symbolic_shapes = true});
  register_pool("nn.max_pool2d", false, "2-D max pooling, NCHW");
  register_pool("nn.avg_pool2d", true, "2-D average pooling, NCHW");
  register_op({.name = "nn.global_avg_pool2d",
               .num_inputs = 1,
               .attrs = {{"layout", AttrKind::kString, AttrValue(std::string("NCHW"))}},
               .type_relation =
                   [](const std::vector<Type>& args, const AttrsNode&) -> Type {
                     const std::string op = "nn.global_avg_pool2d";
                     return with_symbolic_batch(args, 0, op, [&](const std::vector<Type>& a) {
                       const TensorTypeNode& data = expect_rank(a, 0, 4, op, "data", "(N, C, H, W)");
                       return Type(tensor_type({data.shape[0], data.shape[1], 1, 1}, data.dtype));
                     });
                   },
               .pattern = OpPattern::kAnchor,
               .check_attrs =
                   [](const AttrsNode& attrs) {
                     check_one_of("nn.global_avg_pool2d", "layout", attrs.get_string("layout"), {"NCHW"});
                   },
               .doc = "mean over H and W: (N, C, 1, 1)",
               .symbolic_shapes = true});
}

}  // namespace switchyard
