// The placement operators' interned handles.
#include <gtest/gtest.h>

#include "op/placement_ops.h"
#include "op/registry.h"

namespace switchyard {
namespace placement_ops_test {

TEST(PlacementOps, HandlesAreTheInternedOperators) {
  EXPECT_EQ(on_device_op(), as<OpNode>(op_get("on_device")));
  EXPECT_EQ(device_copy_op(), as<OpNode>(op_get("device_copy")));
  EXPECT_TRUE(is_placement_op(on_device_op()));
  EXPECT_TRUE(is_placement_op(device_copy_op()));
  EXPECT_FALSE(is_placement_op(as<OpNode>(op_get("add"))));
  EXPECT_FALSE(is_placement_op(nullptr));
}

TEST(PlacementOps, RecognisesCalls) {
  Var x = make_var("x", tensor_type({2}, DType::kFloat32));
  Expr wish = make_op_call("on_device", {x}, {{"device", std::string("cpu:0")}});
  Expr copy = make_op_call("device_copy", {x}, {{"src", std::string("cpu:0")}, {"dst", std::string("cpu:1")}});
  EXPECT_EQ(as_on_device(wish), as<CallNode>(wish));
  EXPECT_EQ(as_device_copy(wish), nullptr);
  EXPECT_EQ(as_device_copy(copy), as<CallNode>(copy));
  EXPECT_EQ(as_on_device(x), nullptr);
  EXPECT_EQ(as_device_copy(make_op_call("negative", {x})), nullptr);
}

}  // namespace placement_ops_test
}  // namespace switchyard
