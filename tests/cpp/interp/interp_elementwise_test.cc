// Reference kernels of the element-wise operators, on hand-computed values.
#include <cmath>
#include <limits>

#include "interp_test_util.h"

namespace switchyard::testing {
namespace interp_elementwise_test {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(InterpElementwise, ArithmeticBroadcasts) {
  NDArray a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(run_op("add", {a, f32({3}, {10, 20, 30})}), DType::kFloat32, {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_array(run_op("subtract", {f32({2, 1}, {1, 2}), f32({3}, {1, 2, 3})}), DType::kFloat32, {2, 3},
               {0, -1, -2, 1, 0, -1});
  expect_array(run_op("multiply", {f32({2}, {1.5, -2}), f32({}, {4})}), DType::kFloat32, {2}, {6, -8});
  expect_array(run_op("divide", {f32({3}, {1, -3, 1}), f32({3}, {4, 2, 0})}), DType::kFloat32, {3},
               {0.25, -1.5, INFINITY});
  expect_array(run_op("power", {f32({2}, {2, 9}), f32({2}, {3, 0.5})}), DType::kFloat32, {2}, {8, 3});
}

TEST(InterpElementwise, IntegerArithmeticWrapsAndTruncates) {
  expect_array(run_op("add", {array(DType::kInt8, {2}, {100, -100}), array(DType::kInt8, {2}, {100, -100})}),
               DType::kInt8, {2}, {-56, 56});
  expect_array(run_op("multiply", {array(DType::kUInt8, {1}, {16}), array(DType::kUInt8, {1}, {17})}),
               DType::kUInt8, {1}, {16});  // 272 mod 256
  expect_array(run_op("divide", {array(DType::kInt32, {3}, {-7, 7, 7}), array(DType::kInt32, {3}, {2, -2, 2})}),
               DType::kInt32, {3}, {-3, -3, 3});
  expect_array(run_op("power", {array(DType::kInt64, {2}, {2, 3}), array(DType::kInt64, {2}, {10, 0})}),
               DType::kInt64, {2}, {1024, 1});
}

TEST(InterpElementwise, ShiftsOfUint8DropBitsAndGiveZeroByEightOrMore) {
  NDArray x = array(DType::kUInt8, {6}, {1, 255, 200, 7, 255, 129});
  NDArray by = array(DType::kUInt8, {6}, {3, 1, 0, 7, 8, 255});
  expect_array(run_op("left_shift", {x, by}), DType::kUInt8, {6}, {8, 254, 200, 128, 0, 0});
  expect_array(run_op("right_shift", {x, by}), DType::kUInt8, {6}, {0, 127, 200, 0, 0, 0});
  expect_array(run_op("right_shift", {x, array(DType::kUInt8, {1}, {2})}), DType::kUInt8, {6}, {0, 63, 50, 1, 63, 32});
}

// Each width shifts its own bits out, and a shift by the width or more
// (undefined in C++) gives 0; uint64 values beyond int64's range shift
// logically.
TEST(InterpElementwise, ShiftsOfWideUnsignedTypesUseTheirWidth) {
  NDArray x16 = array(DType::kUInt16, {4}, {1, 65535, 40000, 3});
  NDArray by16 = array(DType::kUInt16, {4}, {15, 1, 16, 300});
  expect_array(run_op("left_shift", {x16, by16}), DType::kUInt16, {4}, {32768, 65534, 0, 0});
  expect_array(run_op("right_shift", {x16, by16}), DType::kUInt16, {4}, {0, 32767, 0, 0});
  NDArray x32 = array(DType::kUInt32, {3}, {1, 4294967295.0, 7});
  NDArray by32 = array(DType::kUInt32, {3}, {31, 4, 32});
  expect_array(run_op("left_shift", {x32, by32}), DType::kUInt32, {3}, {2147483648.0, 4294967280.0, 0});
  expect_array(run_op("right_shift", {x32, by32}), DType::kUInt32, {3}, {0, 268435455, 0});
  NDArray x64 = array(DType::kUInt64, {3}, {1, 9223372036854775808.0, 5});
  NDArray by64 = array(DType::kUInt64, {3}, {63, 63, 64});
  expect_array(run_op("left_shift", {x64, by64}), DType::kUInt64, {3}, {9223372036854775808.0, 0, 0});
  expect_array(run_op("right_shift", {x64, by64}), DType::kUInt64, {3}, {0, 1, 0});
}

// fmod is C's: the dividend's sign, exact; by zero NaN.
TEST(InterpElementwise, FmodIsTheCLibrarys) {
  NDArray a = array(DType::kFloat32, {5}, {-4.25, 7.5, 5, 1e10, 3});
  NDArray b = array(DType::kFloat32, {5}, {2, -2, 8, 3, 0});
  NDArray got = run_op("fmod", {a, b});
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(got.as<float>()[i], std::fmod(a.as<float>()[i], b.as<float>()[i])) << i;
  EXPECT_TRUE(std::isnan(got.as<float>()[4]));
  EXPECT_EQ(got.as<float>()[0], -0.25f);
}

TEST(InterpElementwise, IntegerDivisionByZeroIsAnError) {
  Error e = op_error("divide", {array(DType::kInt32, {2}, {1, 2}), array(DType::kInt32, {2}, {1, 0})});
  EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  EXPECT_EQ(e.message(), "'divide': integer division by zero");
  EXPECT_EQ(op_error("power", {array(DType::kInt32, {1}, {2}), array(DType::kInt32, {1}, {-1})}).kind(),
            ErrorKind::kRuntime);
}

TEST(InterpElementwise, MaximumMinimumAndComparisons) {
  NDArray a = f32({2}, {1, 5}), b = f32({2}, {3, 2});
  expect_array(run_op("maximum", {a, b}), DType::kFloat32, {2}, {3, 5});
  expect_array(run_op("minimum", {a, b}), DType::kFloat32, {2}, {1, 2});
  EXPECT_TRUE(std::isnan(run_op("maximum", {f32({1}, {kNaN}), f32({1}, {1})}).get_as_double(0)));
  NDArray c = f32({3}, {1, 2, 3}), two = f32({1}, {2});
  expect_array(run_op("equal", {c, two}), DType::kBool, {3}, {0, 1, 0});
  expect_array(run_op("less", {c, two}), DType::kBool, {3}, {1, 0, 0});
  expect_array(run_op("greater", {c, two}), DType::kBool, {3}, {0, 0, 1});
  NDArray p = array(DType::kBool, {3}, {0, 1, 0}), q = array(DType::kBool, {3}, {0, 0, 1});
  expect_array(run_op("maximum", {p, q}), DType::kBool, {3}, {0, 1, 1});
}

TEST(InterpElementwise, Int64ComparesExactly) {
  // 2^53 and 2^53 + 1 are equal as doubles; the kernel must not go through double.
  NDArray a(DType::kInt64, {1}), b(DType::kInt64, {1});
  a.as<int64_t>()[0] = int64_t(1) << 53;
  b.as<int64_t>()[0] = (int64_t(1) << 53) + 1;
  expect_array(run_op("equal", {a, b}), DType::kBool, {1}, {0});
  expect_array(run_op("less", {a, b}), DType::kBool, {1}, {1});
  EXPECT_EQ(run_op("add", {b, b}).as<int64_t>()[0], (int64_t(1) << 54) + 2);
}

TEST(InterpElementwise, RejectsMismatchedArguments) {
  Error e = op_error("add", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
  EXPECT_EQ(e.kind(), ErrorKind::kType);
  EXPECT_EQ(e.message(), "'add': shapes (2) and (3) do not broadcast");
  EXPECT_EQ(op_error("add", {f32({1}, {1}), array(DType::kInt32, {1}, {1})}).kind(), ErrorKind::kType);
  EXPECT_EQ(op_error("add", {array(DType::kBool, {1}, {1}), array(DType::kBool, {1}, {1})}).kind(), ErrorKind::kType);
  EXPECT_EQ(op_error("exp", {array(DType::kInt32, {1}, {1})}).message(),
            "'exp': the input must have a floating-point dtype, got int32");
}

TEST(InterpElementwise, UnaryExact) {
  expect_array(run_op("negative", {f32({2}, {1, -2.5})}), DType::kFloat32, {2}, {-1, 2.5});
  expect_array(run_op("negative", {array(DType::kInt8, {1}, {-128})}), DType::kInt8, {1}, {-128});
  expect_array(run_op("negative", {array(DType::kUInt8, {1}, {1})}), DType::kUInt8, {1}, {255});
  expect_array(run_op("abs", {f32({2}, {-3, 2})}), DType::kFloat32, {2}, {3, 2});
  expect_array(run_op("abs", {array(DType::kInt32, {2}, {-5, 4})}), DType::kInt32, {2}, {5, 4});
  expect_array(run_op("nn.relu", {f32({3}, {-1, 0, 2})}), DType::kFloat32, {3}, {0, 0, 2});
  expect_array(run_op("nn.relu", {array(DType::kInt64, {2}, {-7, 7})}), DType::kInt64, {2}, {0, 7});
  expect_array(run_op("sqrt", {f32({2}, {4, 2.25})}), DType::kFloat32, {2}, {2, 1.5});
  expect_array(run_op("rsqrt", {f32({2}, {4, 0.25})}), DType::kFloat32, {2}, {0.5, 2});
}

TEST(InterpElementwise, ReluIgnoresNaN) {
  // x if x > 0, else +0, the meaning generated code and oneDNN's post-op share.
  NDArray y = run_op("nn.relu", {f32({5}, {-0.0, kNaN, -kNaN, -kInf, kInf})});
  EXPECT_FALSE(std::signbit(y.as<float>()[0]));
  EXPECT_EQ(y.as<float>()[1], 0.0f);
  EXPECT_EQ(y.as<float>()[2], 0.0f);
  EXPECT_EQ(y.as<float>()[3], 0.0f);
  EXPECT_EQ(y.as<float>()[4], float(kInf));
}

TEST(InterpElementwise, AScalarMeaningIsAKernel) {
  // An operator declared with its meaning alone evaluates without a kernel of its own.
  using namespace scalar;
  ScalarExpr x = operand(0);
  register_op({.name = "test.square_plus_one",
               .num_inputs = 1,
               .type_relation = [](const std::vector<Type>& a, const AttrsNode&) { return a[0]; },
               .pattern = OpPattern::kElementwise,
               .scalar = ScalarMeaning{x * x + constant(1), ScalarInputs::kNumeric, {"the input"}}});
  expect_array(run_op("test.square_plus_one", {f32({2}, {3, -0.5})}), DType::kFloat32, {2}, {10, 1.25});
  expect_array(run_op("test.square_plus_one", {array(DType::kInt8, {1}, {16})}), DType::kInt8, {1}, {1});  // 257 wraps
  EXPECT_EQ(op_error("test.square_plus_one", {array(DType::kBool, {1}, {1})}).message(),
            "'test.square_plus_one': the input must be numeric, got bool");
}

TEST(InterpElementwise, UnaryTranscendental) {
  expect_near_array(run_op("exp", {f32({2}, {0, 1})}), {2}, {1, 2.718281828});
  expect_near_array(run_op("log", {f32({2}, {1, 2.718281828})}), {2}, {0, 1});
  expect_near_array(run_op("erf", {f32({2}, {0, 1})}), {2}, {0, 0.8427007929});
  expect_near_array(run_op("tanh", {f32({2}, {0, 1})}), {2}, {0, 0.7615941559});
  expect_near_array(run_op("sigmoid", {f32({3}, {0, 2, -200})}), {3}, {0.5, 0.8807970780, 0});
}

// Values of the C library's functions, by their definitions; outside its
// domain asin, acos, acosh and atanh give NaN, and atanh(1) infinity.
TEST(InterpElementwise, TrigonometricAndHyperbolic) {
  expect_near_array(run_op("sin", {f32({2}, {0, 1})}), {2}, {0, 0.8414709848});
  expect_near_array(run_op("cos", {f32({2}, {0, 1})}), {2}, {1, 0.5403023059});
  expect_near_array(run_op("tan", {f32({2}, {0, 1})}), {2}, {0, 1.557407725});
  expect_near_array(run_op("asin", {f32({2}, {0, 0.5})}), {2}, {0, 0.5235987756});
  expect_near_array(run_op("acos", {f32({2}, {1, 0.5})}), {2}, {0, 1.047197551});
  expect_near_array(run_op("atan", {f32({2}, {0, 1})}), {2}, {0, 0.7853981634});
  expect_near_array(run_op("sinh", {f32({2}, {0, 1})}), {2}, {0, 1.175201194});
  expect_near_array(run_op("cosh", {f32({2}, {0, 1})}), {2}, {1, 1.543080635});
  expect_near_array(run_op("asinh", {f32({2}, {0, 1})}), {2}, {0, 0.881373587});
  expect_near_array(run_op("acosh", {f32({2}, {1, 2})}), {2}, {0, 1.316957897});
  expect_near_array(run_op("atanh", {f32({2}, {0, 0.5})}), {2}, {0, 0.5493061443});
  for (const char* op : {"asin", "acos", "acosh", "atanh"}) {
    SCOPED_TRACE(op);
    NDArray y = run_op(op, {f32({1}, {-2})});
    EXPECT_TRUE(std::isnan(y.as<float>()[0]));
  }
  EXPECT_TRUE(std::isinf(run_op("atanh", {f32({1}, {1})}).as<float>()[0]));
  EXPECT_EQ(op_error("sin", {array(DType::kInt32, {1}, {1})}).message(),
            "'sin': the input must have a floating-point dtype, got int32");
}

TEST(InterpElementwise, FloorCeilRound) {
  NDArray x = f32({7}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4});
  expect_array(run_op("floor", {x}), DType::kFloat32, {7}, {-3, -2, -1, 0, 1, 2, 2});
  expect_array(run_op("ceil", {x}), DType::kFloat32, {7}, {-2, -1, -0.0, 1, 2, 3, 3});
  expect_array(run_op("round", {x}), DType::kFloat32, {7}, {-2, -2, -0.0, 0, 2, 2, 2});  // halves to even
  EXPECT_TRUE(std::signbit(run_op("round", {f32({1}, {-0.5})}).as<float>()[0]));
  EXPECT_TRUE(std::isnan(run_op("floor", {f32({1}, {kNaN})}).get_as_double(0)));
  expect_array(run_op("round", {array(DType::kFloat16, {2}, {1000.5, -3.5})}), DType::kFloat16, {2}, {1000, -4});
  EXPECT_EQ(op_error("ceil", {array(DType::kInt32, {1}, {1})}).message(),
            "'ceil': the input must have a floating-point dtype, got int32");
}

TEST(InterpElementwise, HalfTypesComputeInFloatAndRound) {
  // 2049 is not a float16; it rounds to even (2048). 3.75 is exact.
  expect_array(run_op("add", {array(DType::kFloat16, {2}, {2048, 1.5}), array(DType::kFloat16, {2}, {1, 2.25})}),
               DType::kFloat16, {2}, {2048, 3.75});
  // bfloat16 keeps 8 significant bits: 257 rounds to 256.
  expect_array(run_op("add", {array(DType::kBFloat16, {2}, {256, 1.5}), array(DType::kBFloat16, {2}, {1, 2.25})}),
               DType::kBFloat16, {2}, {256, 3.75});
}

TEST(InterpElementwise, Clip) {
  expect_array(run_op("clip", {f32({3}, {-2, 0.5, 3})}, {{"a_min", number(-1)}, {"a_max", number(1)}}),
               DType::kFloat32, {3}, {-1, 0.5, 1});
  expect_array(run_op("clip", {array(DType::kInt32, {3}, {-5, 3, 9})}, {{"a_min", number(0)}, {"a_max", number(4.9)}}),
               DType::kInt32, {3}, {0, 3, 4});
  // NaN gives a_min, as oneDNN's clip post-op does.
  expect_array(run_op("clip", {f32({4}, {kNaN, -kNaN, kInf, -kInf})}, {{"a_min", number(-1)}, {"a_max", number(1)}}),
               DType::kFloat32, {4}, {-1, -1, 1, -1});
}

TEST(InterpElementwise, Cast) {
  expect_array(run_op("cast", {f32({4}, {-1.7, 2.9, 300, kNaN})}, {{"dtype", text("int8")}}), DType::kInt8, {4},
               {-1, 2, 44, 0});
  expect_array(run_op("cast", {f32({3}, {0, 0.5, kNaN})}, {{"dtype", text("bool")}}), DType::kBool, {3}, {0, 1, 1});
  expect_array(run_op("cast", {array(DType::kInt32, {2}, {3, -1})}, {{"dtype", text("float16")}}), DType::kFloat16,
               {2}, {3, -1});
  expect_array(run_op("cast", {array(DType::kInt32, {2}, {300, -1})}, {{"dtype", text("uint8")}}), DType::kUInt8,
               {2}, {44, 255});
  expect_array(run_op("cast", {array(DType::kBool, {2}, {1, 0})}, {{"dtype", text("int64")}}), DType::kInt64, {2},
               {1, 0});
  // float32 0.1 to bfloat16 rounds to the nearest bfloat16, 0.10009765625.
  expect_array(run_op("cast", {f32({1}, {0.1})}, {{"dtype", text("bfloat16")}}), DType::kBFloat16, {1},
               {0.10009765625});
}

TEST(InterpElementwise, Float64ComputesInDouble) {
  // 1 + 1e-12 is 1 in float; sin and exp of double keep 15 digits.
  NDArray one = array(DType::kFloat64, {2}, {1, 0.5});
  NDArray sum = run_op("add", {one, array(DType::kFloat64, {2}, {1e-12, 1e-12})});
  EXPECT_EQ(sum.as<double>()[0], 1.0 + 1e-12);
  EXPECT_EQ(run_op("sin", {one}).as<double>()[1], std::sin(0.5));
  EXPECT_EQ(run_op("exp", {one}).as<double>()[0], std::exp(1.0));
  EXPECT_EQ(run_op("divide", {one, array(DType::kFloat64, {1}, {3})}).as<double>()[0], 1.0 / 3.0);
  // Casts keep double values and round once to float32.
  NDArray third = run_op("cast", {f32({1}, {0.1})}, {{"dtype", text("float64")}});
  EXPECT_EQ(third.as<double>()[0], double(0.1f));
  EXPECT_EQ(run_op("cast", {sum}, {{"dtype", text("float32")}}).as<float>()[0], 1.0f);
}

TEST(InterpElementwise, NarrowAndUnsignedIntegersWrap) {
  expect_array(run_op("add", {array(DType::kInt16, {2}, {32767, -32768}), array(DType::kInt16, {2}, {1, -1})}),
               DType::kInt16, {2}, {-32768, 32767});
  expect_array(run_op("subtract", {array(DType::kUInt16, {1}, {1}), array(DType::kUInt16, {1}, {2})}),
               DType::kUInt16, {1}, {65535});
  expect_array(run_op("multiply", {array(DType::kUInt32, {1}, {65536}), array(DType::kUInt32, {1}, {65537})}),
               DType::kUInt32, {1}, {65536});  // 2^32 + 2^16 mod 2^32
  expect_array(run_op("cast", {array(DType::kInt32, {2}, {70000, -1})}, {{"dtype", text("uint16")}}),
               DType::kUInt16, {2}, {4464, 65535});
}

TEST(InterpElementwise, Uint64IsUnsignedBeyondInt64) {
  NDArray a(DType::kUInt64, {1}), b(DType::kUInt64, {1});
  a.as<uint64_t>()[0] = 0;
  b.as<uint64_t>()[0] = 1;
  NDArray wrapped = run_op("subtract", {a, b});  // 2^64 - 1, whose bits read as int64 -1
  EXPECT_EQ(wrapped.as<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(run_op("maximum", {wrapped, b}).as<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(run_op("minimum", {wrapped, b}).as<uint64_t>()[0], 1u);
  expect_array(run_op("greater", {wrapped, b}), DType::kBool, {1}, {1});
  NDArray two(DType::kUInt64, {1});
  two.as<uint64_t>()[0] = 2;
  EXPECT_EQ(run_op("divide", {wrapped, two}).as<uint64_t>()[0], UINT64_MAX / 2);
  EXPECT_EQ(run_op("abs", {wrapped}).as<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(run_op("cast", {wrapped}, {{"dtype", text("float64")}}).as<double>()[0], 18446744073709551615.0);
  NDArray big = array(DType::kFloat64, {3}, {1e19, 1e20, -1});
  NDArray back = run_op("cast", {big}, {{"dtype", text("uint64")}});
  EXPECT_EQ(back.as<uint64_t>()[0], 10000000000000000000ull);
  EXPECT_EQ(back.as<uint64_t>()[1], UINT64_MAX);  // saturates
  EXPECT_EQ(back.as<uint64_t>()[2], UINT64_MAX);  // -1 wraps, as through int64
}

TEST(InterpElementwise, WhereBroadcastsAllThree) {
  NDArray cond = array(DType::kBool, {3}, {1, 0, 1});
  NDArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(run_op("where", {cond, x, f32({}, {-1})}), DType::kFloat32, {2, 3}, {1, -1, 3, 4, -1, 6});
}

}  // namespace interp_elementwise_test
}  // namespace switchyard::testing
