// Nodes a pass inserts after planning, stating no device, are placed by an
// incremental re-plan: every other placement stays, the new nodes go where
// the fewest bytes are copied, and the pass infrastructure runs it.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "placement/place_new_nodes.h"
#include "placement/plan_devices.h"
#include "support/test_paths.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/infer_type.h"
#include "transform/instruments.h"

namespace switchyard {
namespace place_new_nodes_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

IRModule planned_mlp() {
  std::string dir = testing::example_models_dir();
  return plan_devices(infer_type(parse_file(dir + "/mlp_two_devices.sy")), CompilationConfig::parse("cpu:0,cpu:1"))
      .module;
}

// For a value crossing a device_copy: cast it to float16 before the copy and
// back after, written with constructors only and no device code.
class CastRoundTrip : public ExprMutator {
 public:
  Expr visit_call(const Call& c) override {
    Expr base = ExprMutator::visit_call(c);
    const CallNode* copy = as_device_copy(base);
    if (!copy) return base;
    Call down = make_op_call("cast", {copy->args[0]}, {{"dtype", std::string("float16")}});
    Call moved = make_call(copy->op, {down}, copy->attrs);
    return make_op_call("cast", {moved}, {{"dtype", std::string("float32")}});
  }
};

Pass cast_round_trip() {
  return make_function_pass({"CastRoundTrip", 0, {}, false}, [](const Function& f, const IRModule&, const PassContext&) {
    return downcast<FunctionNode>(CastRoundTrip().mutate(f));
  });
}

// The casts of @main, in post-order.
std::vector<const CallNode*> casts(const IRModule& mod) {
  std::vector<const CallNode*> out;
  post_order_visit(mod.lookup("main"), [&](const Expr& e) {
    if (const CallNode* c = as_op_call(e, "cast")) out.push_back(c);
  });
  return out;
}

TEST(PlaceNewNodes, TheDownCastGoesWhereItsInputLivesAndTheCopyMovesHalfTheBytes) {
  IRModule rewritten = cast_round_trip()(planned_mlp(), PassContext());
  // The replacement takes the replaced copy's device; the nodes inside it state none.
  std::vector<const CallNode*> before = casts(rewritten);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_TRUE(before[0]->virtual_device()->is_fully_unconstrained());
  EXPECT_EQ(before[1]->virtual_device(), cpu(1));
  EXPECT_TRUE(has_unplaced_nodes(rewritten));

  IRModule placed = place_new_nodes(rewritten);
  EXPECT_FALSE(has_unplaced_nodes(placed));
  std::vector<const CallNode*> after = casts(placed);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0]->virtual_device(), cpu(0));  // where nn.relu's result lives
  EXPECT_EQ(after[1]->virtual_device(), cpu(1));
  const CallNode* copy = as_device_copy(after[1]->args[0]);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(as_tensor(copy->checked_type())->nbytes(), 512 * 2);
  int copies = 0;
  post_order_visit(placed.lookup("main"), [&](const Expr& e) { copies += as_device_copy(e) != nullptr; });
  EXPECT_EQ(copies, 1);
  // Nothing else moved: the planned module's nodes are kept as they were.
  EXPECT_TRUE(placed.lookup("main")->params[0].same_as(rewritten.lookup("main")->params[0]));
  InvariantChecker().check(placed, "CastRoundTrip");
}

TEST(PlaceNewNodes, APlacedModuleComesBackAsItIs) {
  IRModule mod = planned_mlp();
  EXPECT_FALSE(has_unplaced_nodes(mod));
  EXPECT_TRUE(place_new_nodes(mod).lookup("main").same_as(mod.lookup("main")));
}

TEST(PlaceNewNodes, ThePassInfrastructurePlacesThemBeforeTheCheckerLooks) {
  PassContext ctx;
  ctx.place_new_nodes = [](const IRModule& m) { return place_new_nodes(m); };
  ctx.instruments.push_back(std::make_shared<InvariantChecker>());
  IRModule out = Sequential({cast_round_trip()})(planned_mlp(), ctx);
  EXPECT_FALSE(has_unplaced_nodes(out));
  EXPECT_EQ(casts(out)[0]->virtual_device(), cpu(0));
  // Without it the checker names the pass and the unplaced node.
  PassContext bare;
  bare.instruments.push_back(std::make_shared<InvariantChecker>());
  try {
    Sequential({cast_round_trip()})(planned_mlp(), bare);
    ADD_FAILURE() << "no invariant violation reported";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("after pass 'CastRoundTrip': Call is not fully placed"), std::string::npos) << e.message();
  }
}

}  // namespace place_new_nodes_test
}  // namespace switchyard
