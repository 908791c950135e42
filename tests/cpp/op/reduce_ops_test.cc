// Type relations of the reductions sum, mean and max.
#include "cpp/op/op_test_util.h"

namespace switchyard {
namespace reduce_ops_test {

using namespace switchyard::testing;

TEST(ReduceOps, AxesKeepdimsExclude) {
  Type x = f32({2, 3, 4});
  for (const char* op : {"sum", "mean", "max"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(relate(op, {x}), f32({}));
    EXPECT_EQ(relate(op, {x}, {{"keepdims", true}}), f32({1, 1, 1}));
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({1})}}), f32({2, 4}));
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({-1, 0})}}), f32({3}));
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({1})}, {"keepdims", true}}), f32({2, 1, 4}));
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({1})}, {"exclude", true}}), f32({3}));
    // An empty axis list reduces nothing; excluding nothing reduces everything.
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({})}}), x);
    EXPECT_EQ(relate(op, {x}, {{"axis", ints({})}, {"exclude", true}}), f32({}));
    EXPECT_EQ(relate(op, {of(DType::kInt32, {5})}), of(DType::kInt32, {}));
    EXPECT_EQ(relate_error(op, {x}, {{"axis", ints({3})}}), "'" + std::string(op) + "': axis 3 is out of range for rank 3");
    EXPECT_EQ(relate_error(op, {x}, {{"axis", ints({1, -2})}}),
              "'" + std::string(op) + "': axis [1, -2] names dimension 1 twice");
    EXPECT_CONTAINS(attrs_error(op, {{"axis", integer(1)}}), "must be a list of integers");
    EXPECT_EQ(find_op_def(op)->pattern, OpPattern::kReduction);
  }
}

TEST(ReduceOps, DefaultsAreNormalized) {
  Attrs attrs = normalize_attrs(*find_op_def("sum"), {});
  EXPECT_TRUE(attrs->is_none("axis"));
  EXPECT_FALSE(attrs->get_bool("keepdims"));
  EXPECT_FALSE(attrs->get_bool("exclude"));
  EXPECT_EQ(attrs->entries().size(), 3u);
}

}  // namespace reduce_ops_test
}  // namespace switchyard
