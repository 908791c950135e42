// Type relations of the element-wise and broadcasting operators.
#include "cpp/op/op_test_util.h"

namespace switchyard {
namespace elementwise_ops_test {

using namespace switchyard::testing;

TEST(ElementwiseOps, BinaryArithmeticBroadcasts) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(relate(op, {f32({2, 1, 4}), f32({3, 1})}), f32({2, 3, 4}));
    EXPECT_EQ(relate(op, {f32({}), f32({5})}), f32({5}));
    EXPECT_EQ(relate(op, {of(DType::kInt32, {2}), of(DType::kInt32, {2})}), of(DType::kInt32, {2}));
    EXPECT_EQ(relate_error(op, {f32({2, 3}), f32({4})}),
              "'" + std::string(op) + "' cannot broadcast shapes (2, 3) and (4) (dimension 1: 3 vs 4)");
    EXPECT_CONTAINS(relate_error(op, {f32({2}), of(DType::kInt32, {2})}), "needs equal dtypes, got float32 and int32");
  }
}

TEST(ElementwiseOps, ShiftsTakeUnsignedIntegersOnly) {
  for (const char* op : {"left_shift", "right_shift"}) {
    SCOPED_TRACE(op);
    for (DType t : {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64})
      EXPECT_EQ(relate(op, {of(t, {2, 3}), of(t, {3})}), of(t, {2, 3}));
    EXPECT_CONTAINS(relate_error(op, {of(DType::kInt32, {2}), of(DType::kInt32, {2})}),
                    "needs unsigned integer operands (uint8, uint16, uint32, uint64), got int32");
    EXPECT_CONTAINS(relate_error(op, {of(DType::kBool, {2}), of(DType::kBool, {2})}), "got bool");
    EXPECT_CONTAINS(relate_error(op, {of(DType::kUInt8, {2}), of(DType::kUInt8, {3})}), "cannot broadcast shapes");
  }
}

TEST(ElementwiseOps, ComparisonsGiveBool) {
  for (const char* op : {"equal", "less", "greater"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(relate(op, {f32({2, 3}), f32({3})}), of(DType::kBool, {2, 3}));
    EXPECT_CONTAINS(relate_error(op, {f32({2}), f32({3})}), "cannot broadcast shapes (2) and (3)");
  }
}

TEST(ElementwiseOps, UnaryKeepTheType) {
  for (const char* op : {"negative", "exp", "log", "sqrt", "rsqrt", "erf", "tanh", "sigmoid", "abs", "nn.relu", "sin",
                         "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(relate(op, {f32({2, 3})}), f32({2, 3}));
    EXPECT_EQ(relate_error(op, {tuple_type({f32({2})})}),
              "argument 0 of '" + std::string(op) + "' must be a tensor, got (Tensor[(2), float32],)");
  }
}

TEST(ElementwiseOps, ArityIsDeclared) {
  EXPECT_EQ(find_op_def("add")->num_inputs, 2);
  EXPECT_EQ(find_op_def("exp")->num_inputs, 1);
  EXPECT_EQ(find_op_def("where")->num_inputs, 3);
  EXPECT_EQ(find_op_def("add")->pattern, OpPattern::kBroadcast);
  EXPECT_EQ(find_op_def("exp")->pattern, OpPattern::kElementwise);
}

TEST(ElementwiseOps, Clip) {
  EXPECT_EQ(relate("clip", {f32({3})}, {{"a_min", 0.0}, {"a_max", integer(6)}}), f32({3}));
  Attrs attrs = normalize_attrs(*find_op_def("clip"), {{"a_min", integer(-1)}, {"a_max", 1.5}});
  EXPECT_EQ(attrs->get_float("a_min"), -1.0);  // an int literal becomes a float
  EXPECT_EQ(attrs_error("clip", {{"a_min", 0.0}}), "operator 'clip' requires attribute 'a_max' (a number)");
  EXPECT_EQ(attrs_error("clip", {{"a_min", 2.0}, {"a_max", 1.0}}), "'clip': a_min (2.0) must not exceed a_max (1.0)");
  EXPECT_CONTAINS(attrs_error("clip", {{"a_min", text("x")}, {"a_max", 1.0}}), "attribute 'a_min' of 'clip' must be a number");
}

TEST(ElementwiseOps, Cast) {
  EXPECT_EQ(relate("cast", {f32({2, 3})}, {{"dtype", text("int64")}}), of(DType::kInt64, {2, 3}));
  EXPECT_EQ(relate("cast", {of(DType::kBool, {})}, {{"dtype", text("float16")}}), of(DType::kFloat16, {}));
  EXPECT_EQ(attrs_error("cast", {{"dtype", text("float64x")}}), "attribute 'dtype': unknown dtype \"float64x\"");
  EXPECT_EQ(attrs_error("cast", {}), "operator 'cast' requires attribute 'dtype' (a dtype string)");
}

TEST(ElementwiseOps, Where) {
  Type cond = of(DType::kBool, {2, 1});
  EXPECT_EQ(relate("where", {cond, f32({1, 3}), f32({3})}), f32({2, 3}));
  EXPECT_EQ(relate_error("where", {f32({2}), f32({2}), f32({2})}),
            "'where': argument 0 (condition) must have dtype bool, got float32");
  EXPECT_EQ(relate_error("where", {cond, f32({2, 1}), of(DType::kInt32, {2, 1})}),
            "'where': x is float32 but y is int32; the two branches must have equal dtypes");
  EXPECT_CONTAINS(relate_error("where", {cond, f32({2, 3}), f32({4})}), "'where' cannot broadcast shapes (2, 3) and (4)");
}

}  // namespace elementwise_ops_test
}  // namespace switchyard
