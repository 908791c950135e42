// Scalar meanings of element-wise operators: every element-wise operator
// has one, and their typing, exactness and arity rules.
#include "cpp/op/op_test_util.h"

namespace switchyard {
namespace scalar_expr_test {

using namespace scalar;

TEST(ScalarExpr, EveryElementwiseOperatorHasAMeaning) {
  for (const OpDef* def : all_op_defs()) {
    bool elementwise = def->pattern == OpPattern::kElementwise || def->pattern == OpPattern::kBroadcast;
    if (!elementwise || def->name == "broadcast_to") continue;  // broadcast_to only moves elements
    SCOPED_TRACE(def->name);
    ASSERT_TRUE(def->scalar.has_value());
    EXPECT_EQ(scalar_arity(def->scalar->expr), def->num_inputs);
    EXPECT_EQ(def->scalar->operand_names.size(), size_t(def->num_inputs));
  }
}

TEST(ScalarExpr, ConstantsTakeTheValueOperandsDType) {
  std::vector<DType> where = {DType::kBool, DType::kInt8, DType::kInt8};
  EXPECT_EQ(scalar_dtype(constant(0), where, DType::kInt8), DType::kInt8);
  EXPECT_EQ(scalar_dtype(select(operand(0), constant(1), operand(2)), where, DType::kInt8), DType::kInt8);
  std::vector<DType> half = {DType::kFloat16};
  EXPECT_EQ(scalar_dtype(constant(1) / operand(0), half, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(scalar_dtype(call(ScalarOp::kLess, {operand(0), constant(0)}), half, DType::kBool), DType::kBool);
  EXPECT_EQ(scalar_dtype(cast(operand(0), "dtype"), half, DType::kInt32), DType::kInt32);
}

TEST(ScalarExpr, ExactWhenTheResultIsAnOperandOrConstant) {
  ScalarExpr x = operand(0);
  EXPECT_TRUE(scalar_is_exact(call(ScalarOp::kMaximum, {x, constant(0)})));
  EXPECT_TRUE(scalar_is_exact(find_op_def("nn.relu")->scalar->expr));  // x > 0 ? x : 0
  EXPECT_TRUE(scalar_is_exact(-call(ScalarOp::kAbs, {x})));
  EXPECT_FALSE(scalar_is_exact(x + constant(0)));
  EXPECT_FALSE(scalar_is_exact(select(call(ScalarOp::kLess, {x, attribute("a_min")}), attribute("a_min"), x)));
}

TEST(ScalarExpr, ArityIsOneMoreThanTheLargestOperand) {
  EXPECT_EQ(scalar_arity(constant(1) / (constant(1) + call(ScalarOp::kExp, {-operand(0)}))), 1);
  EXPECT_EQ(scalar_arity(select(operand(0), operand(1), operand(2))), 3);
}

}  // namespace scalar_expr_test
}  // namespace switchyard
