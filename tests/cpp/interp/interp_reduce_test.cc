// Reference kernels of sum, mean, max and prod with axis, keepdims and exclude, on
//   0 1 2
//   3 4 5
#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_reduce_test {

NDArray grid() { return iota(DType::kFloat32, {2, 3}); }

TEST(InterpReduce, SumOverAxes) {
  expect_array(run_op("sum", {grid()}), DType::kFloat32, {}, {15});
  expect_array(run_op("sum", {grid()}, {{"axis", ints({0})}}), DType::kFloat32, {3}, {3, 5, 7});
  expect_array(run_op("sum", {grid()}, {{"axis", ints({-1})}}), DType::kFloat32, {2}, {3, 12});
  expect_array(run_op("sum", {grid()}, {{"axis", ints({1})}, {"keepdims", boolean(true)}}), DType::kFloat32, {2, 1},
               {3, 12});
  expect_array(run_op("sum", {grid()}, {{"keepdims", boolean(true)}}), DType::kFloat32, {1, 1}, {15});
}

TEST(InterpReduce, ExcludeReducesTheOtherAxes) {
  expect_array(run_op("sum", {grid()}, {{"axis", ints({0})}, {"exclude", boolean(true)}}), DType::kFloat32, {2},
               {3, 12});
  NDArray cube = iota(DType::kFloat32, {2, 2, 2});
  expect_array(run_op("sum", {cube}, {{"axis", ints({1})}, {"exclude", boolean(true)}}), DType::kFloat32, {2},
               {0 + 1 + 4 + 5, 2 + 3 + 6 + 7});
}

TEST(InterpReduce, EmptyAxisListReducesNothing) {
  expect_array(run_op("sum", {grid()}, {{"axis", ints({})}}), DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_array(run_op("mean", {grid()}, {{"axis", ints({})}}), DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(InterpReduce, MeanAndMax) {
  expect_array(run_op("mean", {grid()}, {{"axis", ints({1})}}), DType::kFloat32, {2}, {1, 4});
  expect_array(run_op("mean", {grid()}), DType::kFloat32, {}, {2.5});
  expect_array(run_op("max", {f32({2, 2}, {3, -1, -5, -2})}, {{"axis", ints({1})}}), DType::kFloat32, {2}, {3, -2});
  expect_array(run_op("max", {f32({2, 2}, {3, -1, -5, -2})}, {{"axis", ints({0})}, {"keepdims", boolean(true)}}),
               DType::kFloat32, {1, 2}, {3, -1});
}

TEST(InterpReduce, Integers) {
  NDArray a = array(DType::kInt32, {2, 2}, {1, 2, 4, 4});
  expect_array(run_op("sum", {a}, {{"axis", ints({1})}}), DType::kInt32, {2}, {3, 8});
  // An integer mean truncates: 3 / 2 = 1.
  expect_array(run_op("mean", {a}, {{"axis", ints({1})}}), DType::kInt32, {2}, {1, 4});
  expect_array(run_op("max", {array(DType::kInt8, {3}, {-7, 100, 3})}), DType::kInt8, {}, {100});
  expect_array(run_op("max", {array(DType::kBool, {2}, {0, 1})}), DType::kBool, {}, {1});
}

TEST(InterpReduce, WideAndUnsignedTypes) {
  // A float64 sum keeps what float32 would round away.
  NDArray d = array(DType::kFloat64, {3}, {1, 1e-12, 1e-12});
  EXPECT_EQ(run_op("sum", {d}).as<double>()[0], 1.0 + 1e-12 + 1e-12);
  NDArray u(DType::kUInt64, {3});
  u.as<uint64_t>()[0] = 1, u.as<uint64_t>()[1] = UINT64_MAX, u.as<uint64_t>()[2] = 3;
  EXPECT_EQ(run_op("max", {u}).as<uint64_t>()[0], UINT64_MAX);  // not -1 as int64
  NDArray halves(DType::kUInt64, {2});
  halves.as<uint64_t>()[0] = halves.as<uint64_t>()[1] = UINT64_MAX - 1;
  EXPECT_EQ(run_op("mean", {halves}).as<uint64_t>()[0], UINT64_MAX / 2 - 1);  // the wrapped sum, unsigned
  expect_array(run_op("sum", {array(DType::kUInt16, {2}, {65535, 2})}), DType::kUInt16, {}, {1});
  expect_array(run_op("max", {array(DType::kInt16, {3}, {-7, 300, 3})}), DType::kInt16, {}, {300});
}

TEST(InterpReduce, Product) {
  expect_array(run_op("prod", {grid()}, {{"axis", ints({1})}}), DType::kFloat32, {2}, {0, 60});
  expect_array(run_op("prod", {f32({2, 2}, {1.5, -2, 4, 0.5})}, {{"axis", ints({0})}, {"keepdims", boolean(true)}}),
               DType::kFloat32, {1, 2}, {6, -1});
  expect_array(run_op("prod", {f32({0, 2}, {})}, {{"axis", ints({0})}}), DType::kFloat32, {2}, {1, 1});  // empty: 1
  // Integers wrap to their width: 100 * 3 = 300 is 44 in int8.
  expect_array(run_op("prod", {array(DType::kInt8, {2}, {100, 3})}), DType::kInt8, {}, {44});
  expect_array(run_op("prod", {array(DType::kInt64, {2, 2}, {-3, 5, 7, 2})}, {{"axis", ints({1})}}), DType::kInt64,
               {2}, {-15, 14});
}

TEST(InterpReduce, RejectsBadAxes) {
  EXPECT_EQ(op_error("sum", {grid()}, {{"axis", ints({2})}}).kind(), ErrorKind::kType);
  EXPECT_EQ(op_error("sum", {grid()}, {{"axis", ints({0, -2})}}).message(), "'sum': axis -2 is listed twice");
  EXPECT_EQ(op_error("max", {f32({0}, {})}).kind(), ErrorKind::kRuntime);
}

}  // namespace interp_reduce_test
}  // namespace switchyard::testing
