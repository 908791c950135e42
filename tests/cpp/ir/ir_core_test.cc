// Core IR: nodes, with_fields, interning, visitors and mutators.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/with_fields.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {
namespace ir_core_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

TEST(VirtualDevice, InternedAndParsed) {
  EXPECT_EQ(VirtualDevice::parse("cpu:1"), cpu(1));
  EXPECT_EQ(VirtualDevice::parse("device=\"cpu:1\", target=\"cpu\", scope=\"global\""), cpu(1));
  const VirtualDevice* partial = VirtualDevice::parse("device=\"cpu:0\", scope=\"global\"");
  EXPECT_FALSE(partial->is_fully_constrained());
  EXPECT_EQ(partial->str(), "{device=\"cpu:0\", scope=\"global\"}");
  EXPECT_EQ(VirtualDevice::join(partial, cpu(0)), cpu(0));
  EXPECT_EQ(VirtualDevice::join(partial, cpu(1)), nullptr);
  EXPECT_THROW(VirtualDevice::parse("gpu:0"), Error);
  EXPECT_THROW(VirtualDevice::parse("cpu:x"), Error);
  const VirtualDevice* cuda = VirtualDevice::parse("device=\"cuda:0\", target=\"cuda -arch=sm_90\"");
  EXPECT_EQ(cuda->target()->option("-arch"), "sm_90");
}

TEST(VirtualDevice, LayoutIsAPartOfTheDeviceButNotAnotherDevice) {
  const VirtualDevice* nhwc =
      VirtualDevice::parse("device=\"cpu:0\", target=\"cpu\", scope=\"global\", layout=\"nhwc\"");
  EXPECT_EQ(nhwc, cpu(0)->with_layout("nhwc"));
  EXPECT_EQ(nhwc->layout(), "nhwc");
  EXPECT_TRUE(nhwc->is_fully_constrained());
  EXPECT_TRUE(nhwc->same_device(cpu(0)));
  EXPECT_NE(nhwc, cpu(0));
  EXPECT_EQ(nhwc->with_layout(""), cpu(0));
  EXPECT_EQ(nhwc->str(), "{device=\"cpu:0\", target=\"cpu\", scope=\"global\", layout=\"nhwc\"}");
  EXPECT_EQ(VirtualDevice::parse(nhwc->str()), nhwc);
  EXPECT_EQ(VirtualDevice::join(nhwc, cpu(0)), nhwc);
  EXPECT_EQ(VirtualDevice::join(nhwc, cpu(0)->with_layout("nChw16c")), nullptr);
  EXPECT_THROW(VirtualDevice::parse("device=\"cpu:0\", layout=\"\""), Error);
  EXPECT_THROW(VirtualDevice::parse("device=\"cpu:0\", layout=\"n-h\""), Error);
}

TEST(WithFields, ReturnsSameNodeWhenNothingChanges) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32), {.virtual_device = cpu(1), .span = Span("f.sy", 1, 2)});
  Call c = make_op_call("nn.relu", {x}, {}, {.virtual_device = cpu(1), .span = Span("f.sy", 3, 4)});
  EXPECT_TRUE(with_fields(c, {}).same_as(c));
  EXPECT_TRUE(with_fields(c, {.args = std::vector<Expr>{x}}).same_as(c));
}

TEST(WithFields, CarriesEveryUnnamedField) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32));
  Var y = make_var("y", tensor_type({4}, DType::kFloat32));
  Span span("f.sy", 3, 4);
  Type t = tensor_type({4}, DType::kFloat32);
  Call c = make_op_call("add", {x, x}, {}, {.virtual_device = cpu(1), .span = span, .checked_type = t});
  Call d = with_fields(c, {.args = std::vector<Expr>{x, y}});
  EXPECT_FALSE(d.same_as(c));
  EXPECT_EQ(d->virtual_device(), cpu(1));
  EXPECT_EQ(d->span(), span);
  EXPECT_TRUE(d->checked_type().same_as(t));
  EXPECT_TRUE(d->attrs.same_as(c->attrs));
  EXPECT_TRUE(d->args[1].same_as(y));
}

// A mutator that replaces relu(x) by maximum(x, 0): the new call inherits the
// relu's device and span, the new constant inside it the span only (its
// device is planning's to choose) without the pass saying so.
class ReluToMaximum : public ExprMutator {
 public:
  Expr visit_call(const Call& c) override {
    Expr base = ExprMutator::visit_call(c);
    if (const CallNode* relu = as_op_call(base, "nn.relu"))
      return make_op_call("maximum", {relu->args[0], make_scalar_f32(0)});
    return base;
  }
};

TEST(Mutator, ReplacementInheritsDeviceAndSpan) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32), {.virtual_device = cpu(0)});
  Span span("f.sy", 7, 3);
  Call relu = make_op_call("nn.relu", {x}, {}, {.virtual_device = cpu(1), .span = span});
  Function f = make_function({x}, relu, Type(), Attrs(), {.virtual_device = cpu(1)});
  ReluToMaximum m;
  Expr out = m.mutate(f);
  const FunctionNode* fn = as<FunctionNode>(out);
  ASSERT_NE(fn, nullptr);
  const CallNode* max = as_op_call(fn->body, "maximum");
  ASSERT_NE(max, nullptr);
  EXPECT_EQ(max->virtual_device(), cpu(1));
  EXPECT_EQ(max->span(), span);
  EXPECT_TRUE(max->args[1]->virtual_device()->is_fully_unconstrained());
  EXPECT_EQ(max->args[1]->span(), span);
  EXPECT_TRUE(max->args[0].same_as(x));  // the variable keeps its identity
  EXPECT_EQ(out->virtual_device(), cpu(1));
}

TEST(Mutator, MillionDeepChainNeedsNoNativeRecursion) {
  Var x = make_var("x", tensor_type({4}, DType::kFloat32));
  Expr e = x;
  for (int i = 0; i < 1000000; ++i) e = make_op_call("negative", {e});
  ReluToMaximum m;  // identity here: no relu
  EXPECT_TRUE(m.mutate(e).same_as(e));
  size_t count = 0;
  post_order_visit(e, [&](const Expr&) { ++count; });
  EXPECT_EQ(count, 1000002u);  // calls, the var and the shared op node
}

}  // namespace ir_core_test
}  // namespace switchyard
