// Type relations and attribute checks of the injective data-movement operators.
#include "cpp/op/op_test_util.h"
#include "op/shape_rules.h"

namespace switchyard {
namespace transform_ops_test {

using namespace switchyard::testing;

TEST(TransformOps, Reshape) {
  Type x = f32({2, 3, 4});
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({6, 4})}}), f32({6, 4}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({-1})}}), f32({24}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({0, -1})}}), f32({2, 12}));
  EXPECT_EQ(relate("reshape", {x}, {{"newshape", ints({0, 0, 2, 2})}}), f32({2, 3, 2, 2}));
  EXPECT_EQ(relate_error("reshape", {x}, {{"newshape", ints({5, -1})}}),
            "'reshape': cannot reshape x (2, 3, 4) (24 elements) to newshape [5, -1]: 24 is not a multiple of 5");
  EXPECT_EQ(relate_error("reshape", {x}, {{"newshape", ints({5, 5})}}),
            "'reshape': cannot reshape x (2, 3, 4) (24 elements) to (5, 5) (25 elements)");
  EXPECT_EQ(relate_error("reshape", {f32({24})}, {{"newshape", ints({4, 0})}}),
            "'reshape': newshape [4, 0] copies dimension 1 (0) but x (24) has rank 1");
  EXPECT_EQ(attrs_error("reshape", {{"newshape", ints({-1, 2, -1})}}),
            "'reshape': newshape [-1, 2, -1] has more than one -1 (at most one dimension is inferred)");
  EXPECT_EQ(attrs_error("reshape", {{"newshape", ints({-2, 4})}}),
            "'reshape': newshape [-2, 4] has -2; entries are sizes, 0 (copy the input dimension) or -1 (infer)");
  EXPECT_EQ(attrs_error("reshape", {}), "operator 'reshape' requires attribute 'newshape' (a list of integers or dimension strings)");
}

TEST(TransformOps, Transpose) {
  Type x = f32({2, 3, 4});
  EXPECT_EQ(relate("transpose", {x}), f32({4, 3, 2}));
  EXPECT_EQ(relate("transpose", {x}, {{"axes", ints({0, 2, 1})}}), f32({2, 4, 3}));
  EXPECT_EQ(relate("transpose", {x}, {{"axes", ints({-1, 0, 1})}}), f32({4, 2, 3}));
  EXPECT_EQ(relate_error("transpose", {x}, {{"axes", ints({1, 0})}}),
            "'transpose': axes [1, 0] has 2 entries but x has rank 3");
  EXPECT_EQ(attrs_error("transpose", {{"axes", ints({0, 0})}}), "'transpose': axes [0, 0] is not a permutation of 0..1");
  EXPECT_EQ(attrs_error("transpose", {{"axes", ints({0, 2})}}), "'transpose': axes [0, 2] is not a permutation of 0..1");
  EXPECT_EQ(attrs_error("transpose", {{"axes", ints({1, -1})}}), "'transpose': axes [1, -1] is not a permutation of 0..1");
}

TEST(TransformOps, ExpandDims) {
  Type x = f32({2, 3});
  EXPECT_EQ(relate("expand_dims", {x}, {{"axis", integer(0)}}), f32({1, 2, 3}));
  EXPECT_EQ(relate("expand_dims", {x}, {{"axis", integer(2)}}), f32({2, 3, 1}));
  EXPECT_EQ(relate("expand_dims", {x}, {{"axis", integer(-1)}, {"num_newaxis", integer(2)}}), f32({2, 3, 1, 1}));
  EXPECT_EQ(relate("expand_dims", {x}, {{"axis", integer(1)}, {"num_newaxis", integer(0)}}), x);
  EXPECT_EQ(relate_error("expand_dims", {x}, {{"axis", integer(3)}}),
            "'expand_dims': axis 3 is out of range for x (2, 3) (allowed -3..2)");
  EXPECT_EQ(relate_error("expand_dims", {x}, {{"axis", integer(-4)}}),
            "'expand_dims': axis -4 is out of range for x (2, 3) (allowed -3..2)");
  EXPECT_EQ(attrs_error("expand_dims", {{"axis", integer(0)}, {"num_newaxis", integer(-1)}}),
            "'expand_dims': num_newaxis must not be negative, got -1");
  EXPECT_EQ(attrs_error("expand_dims", {}), "operator 'expand_dims' requires attribute 'axis' (an integer)");
}

TEST(TransformOps, Squeeze) {
  Type x = f32({1, 3, 1, 4});
  EXPECT_EQ(relate("squeeze", {x}), f32({3, 4}));
  EXPECT_EQ(relate("squeeze", {x}, {{"axis", ints({2})}}), f32({1, 3, 4}));
  EXPECT_EQ(relate("squeeze", {x}, {{"axis", ints({-4, 2})}}), f32({3, 4}));
  EXPECT_EQ(relate_error("squeeze", {x}, {{"axis", ints({1})}}),
            "'squeeze': cannot squeeze dimension 1 of x (1, 3, 1, 4): its size is 3, not 1");
  EXPECT_EQ(relate_error("squeeze", {x}, {{"axis", ints({0, -4})}}), "'squeeze': axis [0, -4] names dimension 0 twice");
  EXPECT_EQ(relate_error("squeeze", {x}, {{"axis", ints({4})}}), "'squeeze': axis 4 is out of range for rank 4");
}

TEST(TransformOps, ConcatenateTakesATuple) {
  Type pieces = tuple_type({f32({2, 3}), f32({2, 5})});
  EXPECT_EQ(relate("concatenate", {pieces}, {{"axis", integer(1)}}), f32({2, 8}));
  EXPECT_EQ(relate("concatenate", {pieces}, {{"axis", integer(-1)}}), f32({2, 8}));
  EXPECT_EQ(relate("concatenate", {tuple_type({f32({1, 3}), f32({2, 3}), f32({4, 3})})}), f32({7, 3}));
  EXPECT_EQ(relate_error("concatenate", {pieces}),
            "'concatenate': field 1 (2, 5) differs from field 0 (2, 3) in dimension 1 (only axis 0 may differ)");
  EXPECT_EQ(relate_error("concatenate", {f32({2, 3})}),
            "'concatenate': its argument must be a tuple of tensors, got Tensor[(2, 3), float32]");
  EXPECT_EQ(relate_error("concatenate", {tuple_type({})}), "'concatenate': cannot concatenate an empty tuple");
  EXPECT_EQ(relate_error("concatenate", {tuple_type({f32({2}), f32({2, 1})})}),
            "'concatenate': field 1 (2, 1) has rank 2 but field 0 (2) has rank 1");
  EXPECT_EQ(relate_error("concatenate", {tuple_type({f32({2}), of(DType::kInt32, {2})})}),
            "'concatenate': field 1 is int32 but field 0 is float32; dtypes must match");
  EXPECT_EQ(relate_error("concatenate", {tuple_type({f32({2}), tuple_type({})})}),
            "'concatenate': field 1 of the tuple must be a tensor, got ()");
  EXPECT_EQ(relate_error("concatenate", {tuple_type({f32({}), f32({})})}),
            "'concatenate': cannot concatenate scalars (field 0 has rank 0)");
  EXPECT_EQ(relate_error("concatenate", {pieces}, {{"axis", integer(2)}}), "'concatenate': axis 2 is out of range for rank 2");
  EXPECT_EQ(find_op_def("concatenate")->num_inputs, 1);
}

TEST(TransformOps, SplitReturnsATuple) {
  Type x = f32({2, 10});
  EXPECT_EQ(type_str(relate("split", {x}, {{"indices_or_sections", integer(2)}})),
            "(Tensor[(1, 10), float32], Tensor[(1, 10), float32])");
  EXPECT_EQ(type_str(relate("split", {x}, {{"indices_or_sections", integer(5)}, {"axis", integer(1)}})),
            "(Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32], "
            "Tensor[(2, 2), float32])");
  EXPECT_EQ(type_str(relate("split", {x}, {{"indices_or_sections", ints({3, 7})}, {"axis", integer(-1)}})),
            "(Tensor[(2, 3), float32], Tensor[(2, 4), float32], Tensor[(2, 3), float32])");
  EXPECT_EQ(type_str(relate("split", {x}, {{"indices_or_sections", ints({})}})), "(Tensor[(2, 10), float32],)");
  EXPECT_EQ(relate_error("split", {x}, {{"indices_or_sections", integer(3)}, {"axis", integer(1)}}),
            "'split': 3 sections do not divide the split dimension of size 10 (dimension 1 of x (2, 10))");
  EXPECT_EQ(relate_error("split", {f32({0, 3})}, {{"indices_or_sections", integer(1000000000000)}}),
            "'split': 1000000000000 sections of an empty split dimension; it splits into 1 section "
            "(dimension 0 of x (0, 3))");
  EXPECT_EQ(type_str(relate("split", {f32({0, 3})}, {{"indices_or_sections", integer(1)}})),
            "(Tensor[(0, 3), float32],)");
  EXPECT_EQ(relate_error("split", {x}, {{"indices_or_sections", ints({4, 12})}, {"axis", integer(1)}}),
            "'split': indices [4, 12] must be ascending, positive and below the split dimension's size 10 "
            "(dimension 1 of x (2, 10))");
  EXPECT_EQ(attrs_error("split", {{"indices_or_sections", integer(0)}}),
            "'split': indices_or_sections must be a positive number of sections, got 0");
  EXPECT_EQ(attrs_error("split", {{"indices_or_sections", ints({5, 3})}}),
            "'split': indices_or_sections [5, 3] must be positive and strictly ascending");
  EXPECT_CONTAINS(attrs_error("split", {{"indices_or_sections", text("2")}}), "must be an integer or a list of integers");
}

TEST(TransformOps, StridedSlice) {
  Type x = f32({4, 6});
  auto slice = [&](AttrList attrs) { return relate("strided_slice", {x}, std::move(attrs)); };
  EXPECT_EQ(slice({{"begin", ints({1, 0})}, {"end", ints({3, 6})}}), f32({2, 6}));
  EXPECT_EQ(slice({{"begin", ints({1})}, {"end", ints({3})}}), f32({2, 6}));  // missing axes are kept whole
  EXPECT_EQ(slice({{"begin", ints({0, 0})}, {"end", ints({4, 6})}, {"strides", ints({2, 4})}}), f32({2, 2}));
  EXPECT_EQ(slice({{"begin", ints({-1})}, {"end", ints({-5})}, {"strides", ints({-1})}}), f32({4, 6}));
  EXPECT_EQ(slice({{"begin", ints({-3})}, {"end", ints({100})}}), f32({3, 6}));  // clamped to the extent
  EXPECT_EQ(slice({{"begin", ints({2})}, {"end", ints({2})}, {"axes", ints({1})}}), f32({4, 0}));
  EXPECT_EQ(slice({{"begin", ints({1, 2})}, {"end", ints({3, -1})}, {"slice_mode", text("size")}}), f32({3, 4}));
  EXPECT_EQ(slice({{"begin", ints({1})}, {"end", ints({2})}, {"axes", ints({-1})}, {"slice_mode", text("size")}}),
            f32({4, 2}));
  EXPECT_EQ(relate_error("strided_slice", {x}, {{"begin", ints({3})}, {"end", ints({1})}}),
            "'strided_slice': dimension 0 (size 4): begin 3 and end 1 run against stride 1");
  EXPECT_EQ(relate_error("strided_slice", {x}, {{"begin", ints({0, 0, 0})}, {"end", ints({1, 1, 1})}}),
            "'strided_slice': begin [0, 0, 0] has 3 entries but x (4, 6) has rank 2");
  EXPECT_EQ(relate_error("strided_slice", {x}, {{"begin", ints({0, 0})}, {"end", ints({1, 1})}, {"axes", ints({1, -1})}}),
            "'strided_slice': axes [1, -1] names dimension 1 twice");
  EXPECT_EQ(relate_error("strided_slice", {x}, {{"begin", ints({0})}, {"end", ints({1})}, {"axes", ints({2})}}),
            "'strided_slice': axes entry 2 is out of range for rank 2");
}

TEST(TransformOps, StridedSliceAttributeChecks) {
  EXPECT_EQ(attrs_error("strided_slice", {{"begin", ints({0, 0})}, {"end", ints({1})}}),
            "'strided_slice': begin [0, 0] and end [1] must have the same length");
  EXPECT_EQ(attrs_error("strided_slice", {{"begin", ints({0})}, {"end", ints({1})}, {"strides", ints({0})}}),
            "'strided_slice': strides [0] has a zero stride");
  EXPECT_EQ(attrs_error("strided_slice", {{"begin", ints({0})}, {"end", ints({1})}, {"strides", ints({1, 1})}}),
            "'strided_slice': strides [1, 1] has more entries than begin [0]");
  EXPECT_EQ(attrs_error("strided_slice", {{"begin", ints({0})}, {"end", ints({1})}, {"axes", ints({0, 1})}}),
            "'strided_slice': axes [0, 1] must name one dimension per begin entry [0]");
  EXPECT_EQ(attrs_error("strided_slice", {{"begin", ints({0})}, {"end", ints({1})}, {"slice_mode", text("stop")}}),
            "'strided_slice': slice_mode must be one of \"end\", \"size\", got \"stop\"");
  EXPECT_EQ(attrs_error("strided_slice",
                        {{"begin", ints({0})}, {"end", ints({1})}, {"strides", ints({2})}, {"slice_mode", text("size")}}),
            "'strided_slice': strides [2] must be 1 when slice_mode is \"size\"");
  EXPECT_CONTAINS(attrs_error("strided_slice", {{"begin", ints({0})}}), "requires attribute 'end'");
}

TEST(TransformOps, StridedSliceAxesForKernels) {
  std::vector<SliceAxis> axes = strided_slice_axes(
      {4, 6}, *normalize_attrs(*find_op_def("strided_slice"),
                               {{"begin", ints({-1, 1})}, {"end", ints({-100, 6})}, {"strides", ints({-2})}}),
      "strided_slice");
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0].begin, 3);  // reads rows 3 and 1
  EXPECT_EQ(axes[0].stride, -2);
  EXPECT_EQ(axes[0].length, 2);
  EXPECT_EQ(axes[1].begin, 1);
  EXPECT_EQ(axes[1].stride, 1);
  EXPECT_EQ(axes[1].length, 5);
}

TEST(TransformOps, Take) {
  Type data = f32({5, 6});
  Type indices = of(DType::kInt64, {2, 3});
  EXPECT_EQ(relate("take", {data, indices}), f32({2, 3}));
  EXPECT_EQ(relate("take", {data, indices}, {{"axis", integer(0)}}), f32({2, 3, 6}));
  EXPECT_EQ(relate("take", {data, of(DType::kInt32, {4})}, {{"axis", integer(-1)}, {"mode", text("wrap")}}), f32({5, 4}));
  EXPECT_EQ(relate("take", {data, of(DType::kInt32, {})}, {{"axis", integer(1)}}), f32({5}));
  EXPECT_EQ(relate_error("take", {data, f32({2})}), "'take': argument 1 (indices) must be int32 or int64, got float32");
  EXPECT_EQ(relate_error("take", {data, indices}, {{"axis", integer(2)}}), "'take': axis 2 is out of range for rank 2");
  EXPECT_EQ(relate_error("take", {f32({}), indices}, {{"axis", integer(0)}}),
            "'take': data is a scalar; take along an axis needs at least 1 dimension");
  EXPECT_EQ(attrs_error("take", {{"mode", text("raise")}}),
            "'take': mode must be one of \"clip\", \"wrap\", \"fast\", got \"raise\"");
  EXPECT_EQ(normalize_attrs(*find_op_def("take"), {})->get_string("mode"), "clip");
}

TEST(TransformOps, BroadcastTo) {
  EXPECT_EQ(relate("broadcast_to", {f32({3, 1})}, {{"shape", ints({2, 3, 4})}}), f32({2, 3, 4}));
  EXPECT_EQ(relate("broadcast_to", {f32({})}, {{"shape", ints({5})}}), f32({5}));
  EXPECT_EQ(relate_error("broadcast_to", {f32({3, 2})}, {{"shape", ints({3, 4})}}),
            "'broadcast_to': cannot broadcast x (3, 2) to (3, 4): dimension 1 of x has size 2 but the target has 4 "
            "(sizes must be equal or 1)");
  EXPECT_EQ(relate_error("broadcast_to", {f32({2, 2})}, {{"shape", ints({2})}}),
            "'broadcast_to': cannot broadcast x (2, 2) of rank 2 to the lower-rank shape (2)");
  EXPECT_EQ(attrs_error("broadcast_to", {{"shape", ints({2, -1})}}), "'broadcast_to': shape must not be negative, got [2, -1]");
}

}  // namespace transform_ops_test
}  // namespace switchyard
