// Structural equality, difference reports and hashing.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/structural_equal.h"
#include "op/registry.h"
#include "text/parser.h"

namespace switchyard {
namespace structural_equal_test {

const VirtualDevice* cpu(int id) { return VirtualDevice::for_device(DeviceKind::kCPU, id); }
Type t4() { return tensor_type({4}, DType::kFloat32); }

constexpr StructuralEqualOptions kSpans{.compare_spans = true};

TEST(StructuralEqual, BoundVariablesCompareUpToRenaming) {
  Var x = make_var("x", t4()), y = make_var("y", t4());
  Var a = make_var("a", t4()), b = make_var("b", t4());
  Function f = make_function({x, y}, make_op_call("subtract", {x, y}));
  Function g = make_function({a, b}, make_op_call("subtract", {a, b}));
  Function swapped = make_function({a, b}, make_op_call("subtract", {b, a}));
  EXPECT_TRUE(structural_equal(f, g));
  EXPECT_EQ(structural_hash(f), structural_hash(g));
  EXPECT_FALSE(structural_equal(f, swapped));
  std::optional<std::string> diff = structural_diff(f, swapped);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->substr(0, diff->find('\n')), "expr.body.args[0]: different variables");

  Var l1 = make_var("l"), l2 = make_var("m");
  EXPECT_TRUE(structural_equal(make_let(l1, make_scalar_f32(1), l1), make_let(l2, make_scalar_f32(1), l2)));
  EXPECT_FALSE(structural_equal(make_let(l1, make_scalar_f32(1), x), make_let(l2, make_scalar_f32(1), l2)));
}

TEST(StructuralEqual, ParameterTypesAndFreeVariables) {
  Var x = make_var("x", t4()), y = make_var("y", t4()), z = make_var("z", tensor_type({5}, DType::kFloat32));
  EXPECT_FALSE(structural_equal(make_function({x}, x), make_function({z}, z)));
  // Free variables pair up where first met, consistently.
  EXPECT_TRUE(structural_equal(make_op_call("add", {x, x}), make_op_call("add", {y, y})));
  EXPECT_FALSE(structural_equal(make_op_call("add", {x, x}), make_op_call("add", {x, y})));
}

TEST(StructuralEqual, DeviceDifferenceIsFoundAndCanBeIgnored) {
  Var x = make_var("x", t4());
  IRModule a, b;
  a.add("main", make_function({x}, make_op_call("negative", {make_op_call("exp", {x}, {}, {.virtual_device = cpu(0)})})));
  b.add("main", make_function({x}, make_op_call("negative", {make_op_call("exp", {x}, {}, {.virtual_device = cpu(1)})})));
  EXPECT_FALSE(structural_equal(a, b));
  std::optional<std::string> diff = structural_diff(a, b);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(*diff,
            "@main.body.args[0]: devices differ\n"
            "  lhs: Call exp (1 args) @cpu:0\n"
            "  rhs: Call exp (1 args) @cpu:1");
  EXPECT_TRUE(structural_equal(a, b, {.compare_devices = false}));
  EXPECT_NE(structural_hash(a.lookup("main")), structural_hash(b.lookup("main")));
  EXPECT_EQ(structural_hash(a.lookup("main"), {.compare_devices = false}),
            structural_hash(b.lookup("main"), {.compare_devices = false}));
}

TEST(StructuralEqual, SpanDifferenceOnlyWhenComparingSpans) {
  // Spans count only when asked for, as in TVM: a module equals its reprint.
  std::string text = "def @main(%x: float32) {\n  negative(%x)\n}\n";
  IRModule a = parse_module(text, "a.sy");
  IRModule b = parse_module("\n" + text, "a.sy");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_diff(a, b), std::nullopt);
  EXPECT_EQ(structural_hash(a.lookup("main")), structural_hash(b.lookup("main")));
  EXPECT_FALSE(structural_equal(a, b, kSpans));
  std::optional<std::string> diff = structural_diff(a, b, kSpans);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->substr(0, diff->find('\n')), "@main: spans differ");
  EXPECT_NE(structural_hash(a.lookup("main"), kSpans), structural_hash(b.lookup("main"), kSpans));
}

TEST(StructuralEqual, ConstantsCompareBitwiseAndAttributesByValue) {
  EXPECT_TRUE(structural_equal(make_scalar_f32(NAN), make_scalar_f32(NAN)));
  EXPECT_FALSE(structural_equal(make_scalar_f32(0.0f), make_scalar_f32(-0.0f)));
  Var x = make_var("x", tensor_type({2, 4}, DType::kFloat32));
  Expr sum0 = make_op_call("sum", {x}, {{"axis", std::vector<int64_t>{0}}});
  Expr sum1 = make_op_call("sum", {x}, {{"axis", std::vector<int64_t>{1}}});
  std::optional<std::string> diff = structural_diff(sum0, sum1);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->substr(0, diff->find('\n')), "expr: attributes differ");
}

TEST(StructuralEqual, SharingIsNotCompared) {
  Var x = make_var("x", t4());
  Expr shared = make_op_call("exp", {x});
  Expr dag = make_op_call("add", {shared, shared});
  Expr tree = make_op_call("add", {make_op_call("exp", {x}), make_op_call("exp", {x})});
  EXPECT_TRUE(structural_equal(dag, tree));
  EXPECT_EQ(structural_hash(dag), structural_hash(tree));
  // A diamond chain 64 deep unfolds to 2^64 paths: memoization keeps it linear.
  Expr a = x, b = x;
  for (int i = 0; i < 64; ++i) {
    a = make_op_call("add", {a, a});
    b = make_op_call("add", {b, b});
  }
  EXPECT_TRUE(structural_equal(a, b));
}

TEST(StructuralEqual, GlobalsByNameAndModulesFunctionByFunction) {
  EXPECT_TRUE(structural_equal(make_global_var("f"), make_global_var("f")));
  EXPECT_FALSE(structural_equal(make_global_var("f"), make_global_var("g")));
  IRModule a = parse_module("def @f() {\n  1f\n}\ndef @g() {\n  2f\n}\n", "m.sy");
  IRModule b = parse_module("def @f() {\n  1f\n}\n", "m.sy");
  IRModule c = parse_module("def @f() {\n  1f\n}\ndef @h() {\n  2f\n}\n", "m.sy");
  IRModule d = parse_module("def @f() {\n  1f\n}\ndef @g() {\n  3f\n}\n", "m.sy");
  EXPECT_EQ(structural_diff(a, b).value_or(""), "module: 2 functions on the left, 1 on the right");
  EXPECT_EQ(structural_diff(a, c).value_or(""), "module: function 1 is @g on the left, @h on the right");
  std::optional<std::string> diff = structural_diff(a, d);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(*diff,
            "@g.body: constant values differ\n"
            "  lhs: Constant float32 = 2.000000 at m.sy:5:3\n"
            "  rhs: Constant float32 = 3.000000 at m.sy:5:3");
  EXPECT_FALSE(structural_diff(a, a).has_value());
}

}  // namespace structural_equal_test
}  // namespace switchyard
