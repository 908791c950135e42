// The index maps on kernel IR, and their text form for the generators that
// still write text: the same rules, parenthesized where C++ needs it.
#include <gtest/gtest.h>

#include "backend/cpu_index.h"
#include "backend/cpu_render.h"
#include "op/registry.h"
#include "transform/infer_type.h"

namespace switchyard {
namespace {

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

TEST(CpuIndex, TextIndicesAreOpaqueAndParenthesizedWherePrecedenceNeedsIt) {
  IndexCost cost;
  std::vector<std::string> coords = coordinates_of(ElementIndex::at_offset("row * 4 + j"), {3, 4, 5}, &cost);
  EXPECT_EQ(coords, (std::vector<std::string>{"(row * 4 + j) / 20", "((row * 4 + j) / 5) % 4", "(row * 4 + j) % 5"}));
  EXPECT_TRUE(cost.divided);
  EXPECT_EQ(offset_of(ElementIndex::at_coords({"o + 1", "0", "k"}), {2, 3, 4}), "(o + 1) * 12 + k");
  // An operator's argument index: transpose swaps the coordinates it reads.
  Var x = make_var("x", tensor_type({2, 3}, DType::kFloat32));
  Expr t = infer_expr_type(make_op_call("transpose", {x}, {{"axes", std::vector<int64_t>{1, 0}}}));
  ElementIndex read = argument_index(*as<CallNode>(t), 0, ElementIndex::at_coords({"p", "q"}), nullptr);
  EXPECT_EQ(read.coords, (std::vector<std::string>{"q", "p"}));
}

}  // namespace
}  // namespace switchyard
