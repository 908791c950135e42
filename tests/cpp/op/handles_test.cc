// Operator handles are the registry's interned operators, and the families
// hold exactly the products and windows.
#include <gtest/gtest.h>

#include "op/handles.h"
#include "op/registry.h"

namespace switchyard {
namespace handles_test {

TEST(OpHandles, AreTheInternedOperatorsOfTheirNames) {
  EXPECT_EQ(ops::conv2d(), as<OpNode>(Expr(op_get("nn.conv2d"))));
  EXPECT_EQ(ops::conv2d()->name, "nn.conv2d");
  EXPECT_EQ(ops::relu()->name, "nn.relu");
  EXPECT_EQ(ops::max()->name, "max");
  EXPECT_EQ(ops::layout_convert()->name, "layout_convert");
  EXPECT_NE(ops::add(), ops::subtract());
}

TEST(OpHandles, FamiliesHoldTheProductsAndTheWindows) {
  for (const OpNode* product : {ops::dense(), ops::matmul(), ops::batch_matmul()}) {
    EXPECT_TRUE(ops::is_product(product)) << product->name;
    EXPECT_FALSE(ops::is_window(product)) << product->name;
  }
  for (const OpNode* window : {ops::conv2d(), ops::max_pool2d(), ops::avg_pool2d(), ops::global_avg_pool2d()}) {
    EXPECT_TRUE(ops::is_window(window)) << window->name;
    EXPECT_FALSE(ops::is_product(window)) << window->name;
  }
  for (const OpNode* other : {ops::add(), ops::softmax(), ops::reshape(), static_cast<const OpNode*>(nullptr)}) {
    EXPECT_FALSE(ops::is_product(other));
    EXPECT_FALSE(ops::is_window(other));
  }
}

TEST(OpHandles, DataMovementIsTheOperatorsOwn) {
  for (const OpNode* view : {ops::reshape(), ops::squeeze(), ops::expand_dims()})
    EXPECT_EQ(view->def->movement, DataMovement::kView) << view->name;
  for (const OpNode* indexed : {ops::transpose(), ops::strided_slice()})
    EXPECT_EQ(indexed->def->movement, DataMovement::kIndexed) << indexed->name;
  for (const OpNode* other : {ops::add(), ops::concatenate(), ops::take(), ops::conv2d()})
    EXPECT_EQ(other->def->movement, DataMovement::kNone) << other->name;
}

}  // namespace handles_test
}  // namespace switchyard
