// Reference kernels of the injective operators: reshape, transpose,
// expand_dims, squeeze, concatenate, split, strided_slice, take, broadcast_to.
#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_shape_test {

NDArray row() { return iota(DType::kFloat32, {6}); }  // 0 1 2 3 4 5
NDArray grid() { return iota(DType::kFloat32, {2, 3}); }

TEST(InterpShape, ReshapeCopiesZeroAndInfersMinusOne) {
  expect_array(run_op("reshape", {grid()}, {{"newshape", ints({3, -1})}}), DType::kFloat32, {3, 2},
               {0, 1, 2, 3, 4, 5});
  expect_array(run_op("reshape", {grid()}, {{"newshape", ints({0, -1})}}), DType::kFloat32, {2, 3},
               {0, 1, 2, 3, 4, 5});
  expect_array(run_op("reshape", {grid()}, {{"newshape", ints({-1})}}), DType::kFloat32, {6}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(op_error("reshape", {grid()}, {{"newshape", ints({4})}}).message(),
            "'reshape': cannot reshape (2, 3) (6 elements) to (4)");
}

TEST(InterpShape, Transpose) {
  expect_array(run_op("transpose", {grid()}), DType::kFloat32, {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_array(run_op("transpose", {grid()}, {{"axes", ints({-1, 0})}}), DType::kFloat32, {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_array(run_op("transpose", {iota(DType::kFloat32, {2, 2, 2})}, {{"axes", ints({0, 2, 1})}}), DType::kFloat32,
               {2, 2, 2}, {0, 2, 1, 3, 4, 6, 5, 7});
}

TEST(InterpShape, ExpandDimsAndSqueeze) {
  expect_array(run_op("expand_dims", {grid()}, {{"axis", integer(1)}}), DType::kFloat32, {2, 1, 3},
               {0, 1, 2, 3, 4, 5});
  expect_array(run_op("expand_dims", {grid()}, {{"axis", integer(-1)}}), DType::kFloat32, {2, 3, 1},
               {0, 1, 2, 3, 4, 5});
  expect_array(run_op("expand_dims", {grid()}, {{"axis", integer(0)}, {"num_newaxis", integer(2)}}), DType::kFloat32,
               {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5});
  NDArray x = f32({1, 2, 1}, {7, 8});
  expect_array(run_op("squeeze", {x}), DType::kFloat32, {2}, {7, 8});
  expect_array(run_op("squeeze", {x}, {{"axis", ints({0})}}), DType::kFloat32, {2, 1}, {7, 8});
  EXPECT_EQ(op_error("squeeze", {x}, {{"axis", ints({1})}}).kind(), ErrorKind::kType);
}

NDArray concatenate(std::vector<NDArray> parts, int64_t axis) {
  std::vector<Expr> fields = constants(parts);
  Value v = evaluate_expr(make_op_call("concatenate", {make_tuple(fields)}, {{"axis", integer(axis)}}));
  EXPECT_TRUE(v.is_tensor());
  return v.tensor;
}

TEST(InterpShape, ConcatenateTakesATuple) {
  NDArray a = f32({2, 1}, {1, 2}), b = f32({2, 2}, {3, 4, 5, 6});
  expect_array(concatenate({a, b}, 1), DType::kFloat32, {2, 3}, {1, 3, 4, 2, 5, 6});
  expect_array(concatenate({a, b}, -1), DType::kFloat32, {2, 3}, {1, 3, 4, 2, 5, 6});
  expect_array(concatenate({f32({1, 2}, {1, 2}), b}, 0), DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6});
}

std::vector<std::vector<double>> split_values(const Value& v) {
  std::vector<std::vector<double>> out;
  for (const Value& f : v.fields) out.push_back(values_of(f.tensor));
  return out;
}

TEST(InterpShape, SplitReturnsATuple) {
  Value sections = run_call("split", {row()}, {{"indices_or_sections", integer(3)}});
  ASSERT_TRUE(sections.is_tuple());
  EXPECT_EQ(split_values(sections), (std::vector<std::vector<double>>{{0, 1}, {2, 3}, {4, 5}}));
  Value indices = run_call("split", {row()}, {{"indices_or_sections", ints({1, 4})}});
  EXPECT_EQ(split_values(indices), (std::vector<std::vector<double>>{{0}, {1, 2, 3}, {4, 5}}));
  Value columns = run_call("split", {iota(DType::kFloat32, {2, 4})}, {{"indices_or_sections", integer(2)},
                                                                         {"axis", integer(1)}});
  EXPECT_EQ(split_values(columns), (std::vector<std::vector<double>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(columns.fields[0].tensor.shape_string(), "(2, 2)");
  EXPECT_EQ(op_error("split", {row()}, {{"indices_or_sections", integer(4)}}).kind(), ErrorKind::kType);
}

TEST(InterpShape, StridedSlice) {
  auto slice = [](const NDArray& x, AttrList attrs) { return run_op("strided_slice", {x}, std::move(attrs)); };
  expect_array(slice(row(), {{"begin", ints({1})}, {"end", ints({5})}}), DType::kFloat32, {4}, {1, 2, 3, 4});
  expect_array(slice(row(), {{"begin", ints({1})}, {"end", ints({5})}, {"strides", ints({2})}}), DType::kFloat32, {2},
               {1, 3});
  expect_array(slice(row(), {{"begin", ints({1})}, {"end", ints({100})}}), DType::kFloat32, {5}, {1, 2, 3, 4, 5});
  expect_array(slice(row(), {{"begin", ints({-2})}, {"end", ints({6})}}), DType::kFloat32, {2}, {4, 5});
}

TEST(InterpShape, StridedSliceNegativeStrides) {
  auto slice = [](const NDArray& x, AttrList attrs) { return run_op("strided_slice", {x}, std::move(attrs)); };
  expect_array(slice(row(), {{"begin", ints({-1})}, {"end", ints({-7})}, {"strides", ints({-1})}}), DType::kFloat32,
               {6}, {5, 4, 3, 2, 1, 0});
  expect_array(slice(row(), {{"begin", ints({4})}, {"end", ints({0})}, {"strides", ints({-2})}}), DType::kFloat32,
               {2}, {4, 2});
}

TEST(InterpShape, StridedSliceAxesAndSizeMode) {
  auto slice = [](const NDArray& x, AttrList attrs) { return run_op("strided_slice", {x}, std::move(attrs)); };
  expect_array(slice(grid(), {{"begin", ints({1})}, {"end", ints({3})}, {"axes", ints({1})}}), DType::kFloat32,
               {2, 2}, {1, 2, 4, 5});
  // Fewer entries than the rank: the other axes are taken whole.
  expect_array(slice(grid(), {{"begin", ints({1})}, {"end", ints({2})}}), DType::kFloat32, {1, 3}, {3, 4, 5});
  expect_array(slice(row(), {{"begin", ints({1})}, {"end", ints({2})}, {"slice_mode", text("size")}}),
               DType::kFloat32, {2}, {1, 2});
  expect_array(slice(row(), {{"begin", ints({3})}, {"end", ints({-1})}, {"slice_mode", text("size")}}),
               DType::kFloat32, {3}, {3, 4, 5});
}

TEST(InterpShape, TakeModes) {
  NDArray indices = array(DType::kInt32, {2}, {2, 0});
  expect_array(run_op("take", {grid(), indices}, {{"axis", integer(1)}}), DType::kFloat32, {2, 2}, {2, 0, 5, 3});
  // No axis: the data is flattened; "clip" clamps out-of-range indices.
  expect_array(run_op("take", {grid(), array(DType::kInt64, {2, 2}, {5, 0, -1, 6})}), DType::kFloat32, {2, 2},
               {5, 0, 0, 5});
  expect_array(run_op("take", {grid(), array(DType::kInt64, {2}, {-1, 7})}, {{"mode", text("wrap")}}),
               DType::kFloat32, {2}, {5, 1});
  EXPECT_EQ(op_error("take", {grid(), array(DType::kInt64, {1}, {6})}, {{"mode", text("fast")}}).kind(),
            ErrorKind::kRuntime);
}

TEST(InterpShape, BroadcastTo) {
  expect_array(run_op("broadcast_to", {f32({3}, {1, 2, 3})}, {{"shape", ints({2, 3})}}), DType::kFloat32, {2, 3},
               {1, 2, 3, 1, 2, 3});
  expect_array(run_op("broadcast_to", {f32({2, 1}, {1, 2})}, {{"shape", ints({2, 3})}}), DType::kFloat32, {2, 3},
               {1, 1, 1, 2, 2, 2});
  EXPECT_EQ(op_error("broadcast_to", {f32({2}, {1, 2})}, {{"shape", ints({3})}}).kind(), ErrorKind::kType);
}

}  // namespace interp_shape_test
}  // namespace switchyard::testing
