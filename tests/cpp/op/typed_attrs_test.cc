// The operator families' typed attributes (op/*_attrs.h): each reader gives
// the values a call was built with (defaults filled in by the registry),
// each check refuses a bad value when the call is built, and a call whose
// attributes the registry did not normalize fails rather than reading a
// default silently.
#include <stdexcept>

#include "cpp/op/op_test_util.h"
#include "op/elementwise_attrs.h"
#include "op/handles.h"
#include "op/linear_attrs.h"
#include "op/movement_attrs.h"
#include "op/norm_attrs.h"
#include "op/placement_ops.h"
#include "op/reduce_attrs.h"
#include "op/scan_attrs.h"
#include "op/window_attrs.h"

namespace switchyard {
namespace typed_attrs_test {

using testing::AttrList;
using testing::attrs_error;
using testing::integer;
using testing::ints;
using testing::text;

// The attributes `op` normalizes `given` to, as the parsers and importer build them.
Attrs built(const std::string& op, AttrList given = {}) { return normalize_attrs(*find_op_def(op), std::move(given)); }

TEST(TypedAttrs, ReductionReadsAxisKeepdimsAndExclude) {
  ReduceAttrs all = reduce_attrs(*built("sum"));
  EXPECT_FALSE(all.axis);
  EXPECT_FALSE(all.keepdims);
  EXPECT_FALSE(all.exclude);
  ReduceAttrs some = reduce_attrs(*built("mean", {{"axis", ints({-1, 0})}, {"keepdims", true}, {"exclude", true}}));
  EXPECT_EQ(some.axis, std::vector<int64_t>({-1, 0}));
  EXPECT_TRUE(some.keepdims);
  EXPECT_TRUE(some.exclude);
  EXPECT_EQ(reduced_axes(3, some, "mean"), std::vector<int64_t>({1}));  // exclude: the axes not named
  EXPECT_EQ(reduced_axes(3, all, "sum"), std::vector<int64_t>({0, 1, 2}));
}

TEST(TypedAttrs, AReductionAxisNamedTwiceIsRefusedWhenTheCallIsBuilt) {
  EXPECT_EQ(attrs_error("sum", {{"axis", ints({1, 0, 1})}}), "'sum': axis [1, 0, 1] names 1 twice");
  EXPECT_EQ(attrs_error("squeeze", {{"axis", ints({0, 0})}}), "'squeeze': axis [0, 0] names 0 twice");
  // -1 and 1 are the same dimension only for rank 2: the type relation knows.
  EXPECT_NO_THROW(built("max", {{"axis", ints({-1, 1})}}));
}

TEST(TypedAttrs, NormalisationsReadAxisEpsilonCenterAndScale) {
  NormAttrs layer = norm_attrs(*built("nn.layer_norm", {{"epsilon", 0.5}, {"center", false}}));
  EXPECT_EQ(layer.axis, -1);
  EXPECT_EQ(layer.epsilon, 0.5);
  EXPECT_FALSE(layer.center);
  EXPECT_TRUE(layer.scale);
  EXPECT_EQ(norm_attrs(*built("nn.batch_norm")).axis, 1);
  // softmax has only an axis; the rest keep the struct's defaults.
  NormAttrs softmax = norm_attrs(*built("nn.softmax", {{"axis", integer(0)}}));
  EXPECT_EQ(softmax.axis, 0);
  EXPECT_EQ(softmax.epsilon, NormAttrs{}.epsilon);
  EXPECT_EQ(attrs_error("nn.batch_norm", {{"epsilon", -1.0}}), "'nn.batch_norm': epsilon must not be negative, got -1.0");
  // The writer gives what the reader reads back.
  NormAttrs written{.axis = 2, .epsilon = 1e-3, .center = false, .scale = true};
  NormAttrs read = norm_attrs(*built("nn.layer_norm", attr_entries(written)));
  EXPECT_EQ(read.axis, 2);
  EXPECT_EQ(read.epsilon, 1e-3);
  EXPECT_FALSE(read.center);
}

TEST(TypedAttrs, ProductsReadTheirTransposesAndUnits) {
  LinearAttrs batch = linear_attrs(*built("nn.batch_matmul"));
  EXPECT_FALSE(batch.transpose_a);
  EXPECT_TRUE(batch.transpose_b);  // the registry's default
  EXPECT_FALSE(batch.units);
  EXPECT_EQ(linear_attrs(*built("nn.dense", {{"units", integer(7)}})).units, 7);
  EXPECT_EQ(attrs_error("nn.dense", {{"units", integer(0)}}), "'nn.dense': units must be positive, got 0");
  LinearAttrs read = linear_attrs(*built("nn.batch_matmul", attr_entries(LinearAttrs{.transpose_a = true})));
  EXPECT_TRUE(read.transpose_a);
  EXPECT_FALSE(read.transpose_b);
}

TEST(TypedAttrs, ScansReadTheirAxisAndModes) {
  CumsumAttrs cumsum = cumsum_attrs(*built("cumsum", {{"axis", integer(-1)}, {"reverse", true}}));
  EXPECT_EQ(cumsum.axis, -1);
  EXPECT_FALSE(cumsum.exclusive);
  EXPECT_TRUE(cumsum.reverse);
  TopkAttrs topk = topk_attrs(*built("topk_indices", {{"k", integer(3)}, {"largest", false}}));
  EXPECT_EQ(topk.k, 3);
  EXPECT_EQ(topk.axis, -1);
  EXPECT_FALSE(topk.largest);
  EXPECT_EQ(attrs_error("topk_indices", {{"k", integer(0)}}), "'topk_indices': k must be at least 1, got 0");
}

TEST(TypedAttrs, DataMovementReadsItsAttributes) {
  EXPECT_EQ(reshape_attrs(*built("reshape", {{"newshape", ints({0, -1})}})).newshape, std::vector<int64_t>({0, -1}));
  EXPECT_FALSE(transpose_attrs(*built("transpose")).axes);
  EXPECT_EQ(transpose_attrs(*built("transpose", attr_entries(TransposeAttrs{std::vector<int64_t>{1, 0}}))).axes,
            std::vector<int64_t>({1, 0}));
  ExpandDimsAttrs expand = expand_dims_attrs(*built("expand_dims", {{"axis", integer(-1)}}));
  EXPECT_EQ(expand.axis, -1);
  EXPECT_EQ(expand.num_newaxis, 1);
  EXPECT_EQ(concatenate_attrs(*built("concatenate", {{"axis", integer(2)}})).axis, 2);
  SplitAttrs equal = split_attrs(*built("split", {{"indices_or_sections", integer(3)}, {"axis", integer(1)}}));
  EXPECT_EQ(std::get<int64_t>(equal.indices_or_sections), 3);
  EXPECT_EQ(equal.axis, 1);
  SplitAttrs at = split_attrs(*built("split", {{"indices_or_sections", ints({2, 5})}}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(at.indices_or_sections), std::vector<int64_t>({2, 5}));
  StridedSliceAttrs slice = strided_slice_attrs(
      *built("strided_slice", {{"begin", ints({1})}, {"end", ints({2})}, {"slice_mode", text("size")}}));
  EXPECT_EQ(slice.slice_mode, SliceMode::kSize);
  EXPECT_FALSE(slice.strides);
  TakeAttrs take = take_attrs(*built("take", {{"axis", integer(0)}, {"mode", text("wrap")}}));
  EXPECT_EQ(take.axis, 0);
  EXPECT_EQ(take.mode, TakeMode::kWrap);
  EXPECT_STREQ(take_mode_name(take.mode), "wrap");
  EXPECT_FALSE(take_attrs(*built("take")).axis);
  EXPECT_EQ(broadcast_to_attrs(*built("broadcast_to", {{"shape", ints({2, 3})}})).shape, std::vector<int64_t>({2, 3}));
}

TEST(TypedAttrs, ElementWiseAndPlacementAttributes) {
  ClipAttrs clip = clip_attrs(*built("clip", {{"a_min", integer(-1)}, {"a_max", 2.5}}));
  EXPECT_EQ(clip.a_min, -1.0);
  EXPECT_EQ(clip.a_max, 2.5);
  EXPECT_EQ(cast_attrs(*built("cast", {{"dtype", text("int16")}})).dtype, DType::kInt16);
  Var x = make_var("x", testing::f32({2}));
  Call copy = make_device_copy(x, {.src = VirtualDevice::parse("cpu:0"), .dst = VirtualDevice::parse("cpu:1")}, {});
  EXPECT_EQ(ops::called_op(*copy), device_copy_op());
  DeviceCopyAttrs ends = device_copy_attrs(*copy);
  EXPECT_EQ(ends.src, VirtualDevice::parse("cpu:0"));
  EXPECT_EQ(ends.dst, VirtualDevice::parse("cpu:1"));
}

TEST(TypedAttrs, WindowsReadFromTheAttributesAlone) {
  WindowAttrs pool = window_attrs(*built("nn.avg_pool2d", {{"pool_size", ints({3})},
                                                           {"strides", ints({2, 1})},
                                                           {"padding", ints({1, 2})},
                                                           {"count_include_pad", true}}));
  EXPECT_EQ(pool.pool_h, 3);
  EXPECT_EQ(pool.pool_w, 3);
  EXPECT_EQ(pool.stride_h, 2);
  EXPECT_EQ(pool.stride_w, 1);
  EXPECT_EQ(pool.padding.top, 1);
  EXPECT_EQ(pool.padding.right, 2);
  EXPECT_TRUE(pool.count_include_pad);
  EXPECT_EQ(window_attrs(*built("nn.conv2d", {{"groups", integer(4)}})).groups, 4);
}

// A hand-built call the registry never saw: a missing attribute is a
// logic error, as AttrsNode's getters have it (InferType reports it as
// "malformed attributes"), never a default read silently; a near spelling
// of the right value is accepted, another kind named.
TEST(TypedAttrs, UnnormalizedAttributesFailRatherThanDefault) {
  EXPECT_THROW(reduce_attrs(*make_attrs({{"axes", AttrValue()}})), std::logic_error);
  EXPECT_THROW(transpose_attrs(*make_attrs({})), std::logic_error);
  EXPECT_EQ(concatenate_attrs(*make_attrs({{"axis", ints({2})}})).axis, 2);
  EXPECT_EQ(reduce_attrs(*make_attrs({{"axis", integer(1)}, {"keepdims", integer(1)}, {"exclude", false}})).axis,
            std::vector<int64_t>({1}));
  try {
    concatenate_attrs(*make_attrs({{"axis", text("one")}}));
    ADD_FAILURE() << "a string axis was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "attribute 'axis' must be an integer, got \"one\"");
  }
}

}  // namespace typed_attrs_test
}  // namespace switchyard
