// FuseOps: the groups it forms, placement across devices and copies, fused
// spans, parameters and constants, the invariant checker, the interpreter's
// results before and after, deep chains.
#include <gtest/gtest.h>

#include "interp/evaluate.h"
#include "ir/functor.h"
#include "op/registry.h"
#include "text/parser.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type.h"
#include "transform/instruments.h"

namespace switchyard {
namespace fuse_ops_test {

Type f32(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }
const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }

IRModule typed(const std::string& text) { return infer_type(parse_module(text, "fuse.sy")); }

IRModule planned(const std::string& text) {
  IRModule mod = typed(text);
  mod.set_devices({cpu(0), cpu(1)});
  mod.set_device_planned(true);
  return mod;
}

// One fused call in the result: its operators in evaluation order.
struct FusedGroup {
  std::vector<std::string> ops;
  Call call;
  Function function;
};

std::vector<FusedGroup> fused_groups(const IRModule& mod) {
  std::vector<FusedGroup> groups;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    const CallNode* c = as<CallNode>(e);
    const FunctionNode* f = c ? as<FunctionNode>(c->op) : nullptr;
    if (!f || !f->is_primitive()) return;
    FusedGroup g{{}, Call(c), Function(f)};
    post_order_visit(f->body, [&](const Expr& inner) {
      if (const CallNode* ic = as<CallNode>(inner))
        if (const OpNode* op = as<OpNode>(ic->op)) g.ops.push_back(op->name);
    });
    groups.push_back(std::move(g));
  });
  return groups;
}

std::vector<std::vector<std::string>> group_ops(const IRModule& mod) {
  std::vector<std::vector<std::string>> out;
  for (const FusedGroup& g : fused_groups(mod)) out.push_back(g.ops);
  return out;
}

// Operator calls left in the caller (outside any primitive function).
std::vector<std::string> plain_calls(const IRModule& mod) {
  std::vector<std::string> names;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    if (const CallNode* c = as<CallNode>(e))
      if (const OpNode* op = as<OpNode>(c->op)) names.push_back(op->name);
  });
  // post_order_visit enters the primitive functions too: drop their calls.
  size_t inside = 0;
  for (const FusedGroup& g : fused_groups(mod)) inside += g.ops.size();
  std::vector<std::string> outside;
  for (const std::string& n : names)
    if (n == "device_copy" || n == "on_device") outside.push_back(n);
  EXPECT_EQ(names.size(), inside + outside.size());
  return outside;
}

IRModule fuse(const IRModule& mod, int opt_level = 2) {
  PassContext ctx;
  ctx.opt_level = opt_level;
  IRModule out = FuseOps()(mod, ctx);
  InvariantChecker().check(out, "FuseOps");
  return out;
}

using Groups = std::vector<std::vector<std::string>>;

const char* kMlp = R"(
def @main(%x: Tensor[(2, 8), float32], %w1: Tensor[(16, 8), float32], %b1: Tensor[(16), float32],
          %w2: Tensor[(4, 16), float32], %b2: Tensor[(4), float32]) -> Tensor[(2, 4), float32] {
  %0 = nn.dense(%x, %w1);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2);
  add(%3, %b2)
})";

TEST(FuseOps, AnchorTakesItsElementwiseEpilogue) {
  IRModule fused = fuse(typed(kMlp));
  EXPECT_EQ(group_ops(fused), (Groups{{"nn.dense", "add", "nn.relu"}, {"nn.dense", "add"}}));
  for (const FusedGroup& g : fused_groups(fused)) {
    EXPECT_EQ(g.function->attrs->get_int("Primitive"), 1);
    EXPECT_EQ(g.function->params.size(), 3u);  // data, weight, bias
    EXPECT_TRUE(type_equal(g.call->checked_type(), g.function->ret_type));
  }
}

// An exact GELU reads the product twice: the diamond joins the product's
// group as its epilogue. One that also reads another shape, or whose result
// the function returns, does not.
TEST(FuseOps, AnEpilogueDiamondJoinsTheAnchor) {
  IRModule gelu = fuse(typed(R"(
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(16, 8), float32]) -> Tensor[(2, 16), float32] {
  %0 = nn.dense(%x, %w);
  %1 = erf(divide(%0, 1.4142135f));
  multiply(multiply(%0, add(%1, 1f)), 0.5f)
})"));
  EXPECT_EQ(group_ops(gelu), (Groups{{"nn.dense", "divide", "erf", "add", "multiply", "multiply"}}));
  IRModule kept = fuse(typed(R"(
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(16, 8), float32]) -> (Tensor[(2, 16), float32], Tensor[(2, 16), float32]) {
  %0 = nn.dense(%x, %w);
  (%0, multiply(%0, exp(%0)))
})"));
  EXPECT_EQ(group_ops(kept), (Groups{{"nn.dense"}, {"exp", "multiply"}}));
}

TEST(FuseOps, SpansAreFusedSpansOfTheGroupsNodes) {
  IRModule mod = typed(kMlp);
  IRModule fused = fuse(mod);
  std::vector<Span> first_layer;
  post_order_visit(mod.lookup("main")->body, [&](const Expr& e) {
    if (is<CallNode>(e) && e->span().line() >= 4 && e->span().line() <= 6) first_layer.push_back(e->span());
  });
  ASSERT_EQ(first_layer.size(), 3u);
  FusedGroup g = fused_groups(fused).at(0);
  EXPECT_TRUE(g.function->span().is_fused());
  EXPECT_EQ(g.function->span(), Span::fused(first_layer));
  EXPECT_EQ(g.call->span(), Span::fused(first_layer));
  EXPECT_EQ(g.function->span().to_string().find("fused("), 0u) << g.function->span().to_string();
}

TEST(FuseOps, TwoDevicesMakeTwoPlacedGroupsAroundTheCopy) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(1, 8), float32] @cpu:0, %w1: Tensor[(16, 8), float32] @cpu:0,
          %b1: Tensor[(16), float32] @cpu:0, %w2: Tensor[(4, 16), float32] @cpu:1,
          %b2: Tensor[(4), float32] @cpu:1) -> Tensor[(1, 4), float32] @cpu:1 {
  %0 = nn.dense(%x, %w1) @cpu:0;
  %1 = add(%0, %b1) @cpu:0;
  %2 = nn.relu(%1) @cpu:0;
  %3 = device_copy(%2, src="cpu:0", dst="cpu:1") @cpu:1;
  %4 = nn.dense(%3, %w2) @cpu:1;
  add(%4, %b2) @cpu:1
})");
  IRModule fused = fuse(mod);
  std::vector<FusedGroup> groups = fused_groups(fused);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].ops, (std::vector<std::string>{"nn.dense", "add", "nn.relu"}));
  EXPECT_EQ(plain_calls(fused), std::vector<std::string>{"device_copy"});
  const VirtualDevice* expected[] = {cpu(0), cpu(1)};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(groups[i].function->virtual_device(), expected[i]);
    EXPECT_EQ(groups[i].call->virtual_device(), expected[i]);
    for (const Var& p : groups[i].function->params) EXPECT_EQ(p->virtual_device(), expected[i]);
  }
}

TEST(FuseOps, NeverJoinsCallsOnDifferentDevices) {
  // Pattern-wise exp and negative would chain; their devices differ, so a
  // fused kernel would have to run on both. (Not planned: the placement
  // checker would reject the missing copy, FuseOps must still not merge.)
  IRModule mod = typed(R"(
def @main(%x: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:1 {
  %0 = exp(%x) @cpu:0;
  negative(%0) @cpu:1
})");
  std::vector<FusedGroup> groups = fused_groups(fuse(mod));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].function->virtual_device(), cpu(0));
  EXPECT_EQ(groups[1].function->virtual_device(), cpu(1));
}

TEST(FuseOps, ChainAcrossDeviceCopyStaysSplit) {
  IRModule mod = planned(R"(
def @main(%x: Tensor[(4), float32] @cpu:0) -> Tensor[(4), float32] @cpu:0 {
  %0 = exp(%x) @cpu:0;
  %1 = device_copy(%0, src="cpu:0", dst="cpu:0") @cpu:0;
  negative(%1) @cpu:0
})");
  IRModule fused = fuse(mod);
  EXPECT_EQ(group_ops(fused), (Groups{{"exp"}, {"negative"}}));
  EXPECT_EQ(plain_calls(fused), std::vector<std::string>{"device_copy"});
}

TEST(FuseOps, ElementwiseBroadcastAndInjectiveChainIntoOneGroup) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) -> Tensor[(3, 2), float32] {
  %0 = add(%x, %b);
  %1 = transpose(%0);
  %2 = reshape(%1, newshape=[3, 2]);
  exp(%2)
})");
  EXPECT_EQ(group_ops(fuse(mod)), (Groups{{"add", "transpose", "reshape", "exp"}}));
}

TEST(FuseOps, ReductionTakesPrologueAndEpilogueButNotASecondReduction) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32]) -> float32 {
  %0 = exp(%x);
  %1 = sum(%0, axis=[1]);
  %2 = sqrt(%1);
  max(%2)
})");
  EXPECT_EQ(group_ops(fuse(mod)), (Groups{{"exp", "sum", "sqrt"}, {"max"}}));
}

TEST(FuseOps, AnchorsDoNotTakeProducers) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32] {
  %0 = exp(%x);
  %1 = nn.dense(%0, %w);
  %2 = tanh(%1);
  %3 = sigmoid(%1);
  add(%2, %3)
})");
  // exp stays out; %1's two users chain into one group, which becomes the epilogue.
  EXPECT_EQ(group_ops(fuse(mod)), (Groups{{"exp"}, {"nn.dense", "tanh", "sigmoid", "add"}}));
}

TEST(FuseOps, EpilogueMustKeepTheAnchorsShape) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(4, 8), float32], %y: Tensor[(3, 4), float32])
    -> Tensor[(3, 4), float32] {
  %0 = nn.dense(%x, %w);
  add(%0, %y)
})");
  EXPECT_EQ(group_ops(fuse(mod)), (Groups{{"nn.dense"}, {"add"}}));
}

TEST(FuseOps, ConcatenatePullsItsTupleInAndTakesTensorsSeparately) {
  IRModule mod = typed(R"(
def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32]) -> Tensor[(2, 8), float32] {
  %0 = exp(%a);
  %1 = (%0, %b);
  %2 = concatenate(%1, axis=1);
  nn.relu(%2)
})");
  IRModule fused = fuse(mod);
  std::vector<FusedGroup> groups = fused_groups(fused);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].ops, (std::vector<std::string>{"exp", "concatenate", "nn.relu"}));
  ASSERT_EQ(groups[0].function->params.size(), 2u);
  EXPECT_TRUE(type_equal(groups[0].function->params[0]->checked_type(), f32({2, 3})));
  EXPECT_TRUE(type_equal(groups[0].function->params[1]->checked_type(), f32({2, 5})));
}

TEST(FuseOps, TupleResultsAndProjectionsStayOutside) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(4, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = negative(%x);
  %1 = split(%0, indices_or_sections=2);
  %2 = %1.1;
  exp(%2)
})");
  IRModule fused = fuse(mod);
  EXPECT_EQ(group_ops(fused), (Groups{{"negative", "split"}, {"exp"}}));
  size_t projections = 0;
  post_order_visit(fused.lookup("main")->body, [&](const Expr& e) { projections += is<TupleGetItemNode>(e); });
  EXPECT_EQ(projections, 1u);
}

TEST(FuseOps, TensorConstantsBecomeParametersScalarsStayInside) {
  Var x = make_var("x", f32({2, 2}));
  NDArray table(DType::kFloat32, {2, 2});
  Call add = make_op_call("add", {x, make_constant(table)});
  Call scaled = make_op_call("multiply", {add, make_scalar_f32(2.0f)});
  IRModule mod;
  mod.add("main", make_function({x}, scaled));
  IRModule fused = fuse(infer_type(mod));
  std::vector<FusedGroup> groups = fused_groups(fused);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].function->params.size(), 2u);
  ASSERT_EQ(groups[0].call->args.size(), 2u);
  EXPECT_TRUE(is<ConstantNode>(groups[0].call->args[1]));  // the table is passed in
  size_t inner_constants = 0;
  post_order_visit(groups[0].function->body, [&](const Expr& e) { inner_constants += is<ConstantNode>(e); });
  EXPECT_EQ(inner_constants, 1u);  // the scalar 2
}

TEST(FuseOps, OptLevelZeroMakesOneGroupPerCall) {
  EXPECT_EQ(group_ops(fuse(typed(kMlp), 0)),
            (Groups{{"nn.dense"}, {"add"}, {"nn.relu"}, {"nn.dense"}, {"add"}}));
}

TEST(FuseOps, RunningTwiceChangesNothing) {
  IRModule once = fuse(typed(kMlp));
  IRModule twice = fuse(once);
  EXPECT_TRUE(twice.lookup("main")->body.same_as(once.lookup("main")->body));
}

TEST(FuseOps, InterpreterGivesTheSameResultBeforeAndAfter) {
  IRModule mod = typed(R"(
def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) -> Tensor[(2), float32] {
  %0 = add(%x, %b);
  %1 = exp(%0);
  %2 = sum(%1, axis=[1]);
  %3 = sqrt(%2);
  %4 = (%3, %3);
  %5 = concatenate(%4);
  %6 = strided_slice(%5, begin=[1], end=[3]);
  negative(%6)
})");
  NDArray x(DType::kFloat32, {2, 3}), b(DType::kFloat32, {3});
  for (int i = 0; i < 6; ++i) x.as<float>()[i] = 0.25f * float(i) - 0.5f;
  for (int i = 0; i < 3; ++i) b.as<float>()[i] = float(i);
  std::map<std::string, NDArray> inputs{{"x", x}, {"b", b}};
  NDArray before = flatten_value(evaluate(mod, inputs)).at(0);
  IRModule fused = fuse(mod);
  EXPECT_EQ(fused_groups(fused).size(), 2u);
  NDArray after = flatten_value(evaluate(fused, inputs)).at(0);
  EXPECT_TRUE(before.bitwise_equal(after));
}

TEST(FuseOps, DeepChainsAreIterativeAndGroupsBounded) {
  Var x = make_var("x", f32({4}));
  Expr e = x;
  const int depth = 100000;
  for (int i = 0; i < depth; ++i) e = make_op_call(i % 2 ? "negative" : "exp", {e});
  IRModule mod;
  mod.add("main", make_function({x}, e));
  PassContext ctx;
  ctx.config["FuseOps.max_group_size"] = AttrValue(int64_t(1000));
  IRModule fused = FuseOps()(infer_type(mod), ctx);
  std::vector<FusedGroup> groups = fused_groups(fused);
  ASSERT_EQ(groups.size(), size_t(depth / 1000));
  for (const FusedGroup& g : groups) EXPECT_EQ(g.ops.size(), 1000u);
}

}  // namespace fuse_ops_test
}  // namespace switchyard
