// Types nested 100,000 deep (tuples of tuples, functions returning
// functions) print, compare, hash and size without native recursion, in the
// default 8 MiB stack; shallow types keep their text forms.
#include <gtest/gtest.h>

#include "ir/type.h"

namespace switchyard {
namespace deep_type_test {

constexpr int kDepth = 100000;

Type leaf() { return tensor_type({2, 3}, DType::kFloat32); }

Type nested_tuples(int depth, Type inner = leaf()) {
  Type t = std::move(inner);
  for (int i = 0; i < depth; ++i) t = tuple_type({t, scalar_type(DType::kInt64)});
  return t;
}

Type nested_functions(int depth) {
  Type t = leaf();
  for (int i = 0; i < depth; ++i) t = func_type({leaf()}, t);
  return t;
}

TEST(DeepType, ShallowTypesKeepTheirTextForms) {
  EXPECT_EQ(type_to_string(leaf()), "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_to_string(scalar_type(DType::kBool)), "bool");
  EXPECT_EQ(type_to_string(tuple_type({})), "()");
  EXPECT_EQ(type_to_string(tuple_type({leaf()})), "(Tensor[(2, 3), float32],)");
  EXPECT_EQ(type_to_string(nested_tuples(2)), "((Tensor[(2, 3), float32], int64), int64)");
  EXPECT_EQ(type_to_string(func_type({}, leaf())), "fn () -> Tensor[(2, 3), float32]");
  EXPECT_EQ(type_to_string(func_type({leaf(), scalar_type(DType::kInt32)}, tuple_type({leaf()}))),
            "fn (Tensor[(2, 3), float32], int32) -> (Tensor[(2, 3), float32],)");
  EXPECT_EQ(type_to_string(Type()), "?");
}

TEST(DeepType, EqualityAndHashSeeEveryLevel) {
  EXPECT_TRUE(type_equal(nested_tuples(3), nested_tuples(3)));
  EXPECT_FALSE(type_equal(nested_tuples(3), nested_tuples(2)));
  EXPECT_FALSE(type_equal(nested_tuples(3), nested_tuples(3, tensor_type({2, 4}, DType::kFloat32))));
  EXPECT_FALSE(type_equal(func_type({leaf()}, leaf()), func_type({leaf(), leaf()}, leaf())));
  EXPECT_FALSE(type_equal(func_type({leaf()}, leaf()), tuple_type({leaf(), leaf()})));
  EXPECT_EQ(type_hash(nested_tuples(3)), type_hash(nested_tuples(3)));
  EXPECT_NE(type_hash(nested_tuples(3)), type_hash(nested_tuples(2)));
  EXPECT_NE(type_hash(func_type({leaf()}, leaf())), type_hash(tuple_type({leaf(), leaf()})));
}

TEST(DeepType, HundredThousandNestedTuples) {
  Type deep = nested_tuples(kDepth);
  std::string text = type_to_string(deep);
  EXPECT_EQ(text.size(), size_t(kDepth) * std::string("(, int64)").size() + type_to_string(leaf()).size());
  EXPECT_TRUE(type_equal(deep, nested_tuples(kDepth)));
  EXPECT_FALSE(type_equal(deep, nested_tuples(kDepth, tensor_type({2}, DType::kFloat32))));
  EXPECT_EQ(type_hash(deep), type_hash(nested_tuples(kDepth)));
  EXPECT_EQ(type_nbytes(deep), int64_t(kDepth) * 8 + 24);
}

TEST(DeepType, HundredThousandNestedFunctions) {
  Type deep = nested_functions(kDepth);
  EXPECT_TRUE(type_equal(deep, nested_functions(kDepth)));
  EXPECT_EQ(type_hash(deep), type_hash(nested_functions(kDepth)));
  EXPECT_EQ(type_to_string(deep).rfind("fn (Tensor[(2, 3), float32]) -> fn (", 0), 0u);
  EXPECT_EQ(type_nbytes(deep), 0);
}

}  // namespace deep_type_test
}  // namespace switchyard
