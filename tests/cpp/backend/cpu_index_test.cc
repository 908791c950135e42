// The index maps on kernel IR, rendered as C++ index arithmetic.
#include <gtest/gtest.h>

#include "codegen/element_index.h"
#include "op/registry.h"
#include "targets/cpu/compiler/cpu_render.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace cpu_index_test {

namespace ki = kernel_ir;

std::vector<std::string> rendered(const std::vector<ki::Expr>& exprs) {
  std::vector<std::string> out;
  for (const ki::Expr& e : exprs) out.push_back(render_cpu_index(e));
  return out;
}

TEST(CpuIndex, CoordinatesOfAnOffsetDivideOnlyWhereTheyMust) {
  bool divided = false;
  std::vector<ki::Expr> coords = coordinates_of(IndexAt::at_offset(ki::var("i")), {3, 1, 5}, &divided);
  EXPECT_EQ(rendered(coords), (std::vector<std::string>{"i / 5", "0", "i % 5"}));
  EXPECT_TRUE(divided);
  divided = false;
  coordinates_of(IndexAt::at_offset(ki::var("i")), {1, 7}, &divided);
  EXPECT_FALSE(divided);  // the one varying dimension is the offset itself
  EXPECT_EQ(render_cpu_index(offset_of(IndexAt::at_coords({ki::var("a"), ki::index(0), ki::var("c")}), {3, 4, 5})),
            "a * 20 + c");
}

TEST(CpuIndex, BroadcastReadsTheOperandsOwnCoordinates) {
  IndexAt at = broadcast_index(IndexAt::at_coords({ki::var("a"), ki::var("b"), ki::var("c")}), {2, 3, 4}, {3, 1},
                               nullptr);
  ASSERT_TRUE(at.has_coords);
  EXPECT_EQ(rendered(at.coords), (std::vector<std::string>{"b", "0"}));
  EXPECT_TRUE(ki::is_index(broadcast_index(at, {2, 3, 4}, {1}, nullptr).offset, 0));
}

TEST(CpuIndex, AnArgumentIndexFollowsItsOperator) {
  // transpose swaps the coordinates it reads; reshape reads the row-major offset.
  Var x = make_var("x", tensor_type({2, 3}, DType::kFloat32));
  Expr t = infer_expr_type(make_op_call("transpose", {x}, {{"axes", std::vector<int64_t>{1, 0}}}));
  IndexAt read = argument_index(*as<CallNode>(t), 0, IndexAt::at_coords({ki::var("p"), ki::var("q")}), nullptr);
  ASSERT_TRUE(read.has_coords);
  EXPECT_EQ(rendered(read.coords), (std::vector<std::string>{"q", "p"}));
  Expr r = infer_expr_type(make_op_call("reshape", {x}, {{"newshape", std::vector<int64_t>{6}}}));
  IndexAt flat = argument_index(*as<CallNode>(r), 0, IndexAt::at_coords({ki::add(ki::var("o"), 1)}), nullptr);
  ASSERT_TRUE(flat.offset);
  EXPECT_EQ(render_cpu_index(flat.offset), "o + 1");
  // A reshape that splits one dimension (columns into heads) maps
  // coordinates group by group, with no division to find them.
  Var rows = make_var("rows", tensor_type({2, 12}, DType::kFloat32));
  Expr heads = infer_expr_type(make_op_call("reshape", {rows}, {{"newshape", std::vector<int64_t>{2, 3, 4}}}));
  bool divided = false;
  IndexAt split = argument_index(*as<CallNode>(heads), 0,
                                 IndexAt::at_coords({ki::var("a"), ki::var("b"), ki::var("c")}), &divided);
  ASSERT_TRUE(split.has_coords);
  EXPECT_EQ(rendered(split.coords), (std::vector<std::string>{"a", "b * 4 + c"}));
  EXPECT_FALSE(divided);
}

}  // namespace cpu_index_test
}  // namespace switchyard
