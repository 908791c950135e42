// specialize: a module's dimension variables replaced by values and every
// type re-derived; bind_input_dims: the values read from inputs' shapes,
// with inputs that contradict the declared constraints refused by name.
#include <gtest/gtest.h>

#include "interp/evaluate.h"
#include "ir/structural_equal.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/infer_type.h"
#include "transform/specialize.h"

namespace switchyard {
namespace specialize_test {

constexpr const char* kSymbolic = R"(def @main(%x: Tensor[(n<=8, 3, 4), float32], %y: Tensor[(n<=8, 12), float32]) {
  %0 = reshape(%x, newshape=[0, -1]);
  let %s: Tensor[(n<=8, 12), float32] = add(%0, %y);
  reshape(%s, newshape=[-1])
}
)";

// What specialising kSymbolic at n = 2 gives: reshapes of symbolic shapes state theirs.
constexpr const char* kStatic = R"(def @main(%x: Tensor[(2, 3, 4), float32], %y: Tensor[(2, 12), float32]) {
  %0 = reshape(%x, newshape=[2, 12]);
  let %s: Tensor[(2, 12), float32] = add(%0, %y);
  reshape(%s, newshape=[24])
}
)";

// Attention's heads back to (seq, batch, width): a target naming its symbolic dimensions.
constexpr const char* kNamedTarget = R"(def @main(%x: Tensor[(batch, seq, 4), float32]) {
  %0 = transpose(%x, axes=[1, 0, 2]);
  %1 = reshape(%0, newshape=[-1, 4]);
  reshape(%1, newshape=["seq", "batch", "4"])
}
)";

constexpr const char* kNamedTargetAt2x3 = R"(def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 0, 2]);
  %1 = reshape(%0, newshape=[6, 4]);
  reshape(%1, newshape=[3, 2, 4])
}
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.message();
    return e.message();
  }
  return "(no error)";
}

NDArray zeros(std::vector<int64_t> shape) { return NDArray(DType::kFloat32, shape); }

// Token and position embeddings: the positions are the table's first seq.
constexpr const char* kPositions = R"(def @main(%ids: Tensor[(batch, seq), int64], %table: Tensor[(64, 4), float32]) {
  %0 = strided_slice(%table, begin=[0], end=["seq"], strides=[1], axes=[0]);
  %1 = take(%table, %ids, axis=0);
  add(%1, %0)
}
)";

constexpr const char* kPositionsAt2x5 = R"(def @main(%ids: Tensor[(2, 5), int64], %table: Tensor[(64, 4), float32]) {
  %0 = strided_slice(%table, begin=[0], end=[5], strides=[1], axes=[0]);
  %1 = take(%table, %ids, axis=0);
  add(%1, %0)
}
)";

TEST(Specialize, ASliceEndingAtASymbolicDimensionStatesItsEnd) {
  IRModule symbolic = infer_type(parse_module(kPositions, "s.sy"));
  EXPECT_EQ(type_to_string(symbolic.lookup("main")->ret_type), "Tensor[(batch, seq, 4), float32]");
  IRModule specialized = specialize(symbolic, {{"batch", 2}, {"seq", 5}});
  EXPECT_TRUE(structural_equal(specialized, infer_type(parse_module(kPositionsAt2x5, "t.sy"))));
}

TEST(Specialize, AReshapeNamingItsSymbolicTargetStatesItsShape) {
  IRModule symbolic = infer_type(parse_module(kNamedTarget, "s.sy"));
  EXPECT_EQ(type_to_string(symbolic.lookup("main")->ret_type), "Tensor[(seq, batch, 4), float32]");
  IRModule specialized = specialize(symbolic, {{"batch", 2}, {"seq", 3}});
  EXPECT_TRUE(structural_equal(specialized, infer_type(parse_module(kNamedTargetAt2x3, "t.sy"))));
}

TEST(Specialize, SubstitutesEveryAnnotationAndRetypes) {
  IRModule symbolic = infer_type(parse_module(kSymbolic, "s.sy"));
  IRModule specialized = specialize(symbolic, {{"n", 2}});
  EXPECT_TRUE(structural_equal(specialized, infer_type(parse_module(kStatic, "t.sy"))));
  EXPECT_EQ(type_to_string(specialized.lookup("main")->ret_type), "Tensor[(24), float32]");
  EXPECT_EQ(type_to_string(symbolic.lookup("main")->ret_type), "Tensor[(12*n<=8), float32]") << "unchanged";
}

TEST(Specialize, AValueAboveTheBoundIsRefused) {
  IRModule symbolic = infer_type(parse_module(kSymbolic, "s.sy"));
  EXPECT_EQ(error_of([&] { specialize(symbolic, {{"n", 9}}); }), "dimension n<=8 cannot be 9 (its bound is 8)");
}

TEST(Specialize, InputsBindTheDimensionsAndTheInterpreterRunsThem) {
  IRModule symbolic = infer_type(parse_module(kSymbolic, "s.sy"));
  NDArray x = zeros({3, 3, 4}), y = zeros({3, 12});
  for (int64_t i = 0; i < 36; ++i) x.as<float>()[i] = float(i), y.as<float>()[i] = 100;
  EXPECT_EQ(bind_input_dims(symbolic, {{"x", x}, {"y", y}}), (DimBindings{{"n", 3}}));
  IRModule specialized = specialize_for_inputs(symbolic, {{"x", x}, {"y", y}});
  Value out = evaluate(specialized, {{"x", x}, {"y", y}});
  ASSERT_EQ(out.tensor.shape(), (std::vector<int64_t>{36}));
  EXPECT_EQ(out.tensor.as<float>()[35], 135.0f);
}

TEST(Specialize, InputsThatContradictTheConstraintsAreRefusedByName) {
  IRModule symbolic = infer_type(parse_module(kSymbolic, "s.sy"));
  EXPECT_EQ(error_of([&] { bind_input_dims(symbolic, {{"x", zeros({2, 3, 4})}, {"y", zeros({3, 12})}}); }),
            "input 'y' dimension 0 (n<=8) is 3, but input 'x' dimension 0 (n<=8) is 2: both are 'n'");
  EXPECT_EQ(error_of([&] { bind_input_dims(symbolic, {{"x", zeros({9, 3, 4})}}); }),
            "input 'x' dimension 0 (n<=8) is 9, above the bound n <= 8");
  EXPECT_EQ(error_of([&] { bind_input_dims(symbolic, {{"x", zeros({2, 12})}}); }),
            "input 'x' has 2 dimensions, but the model takes Tensor[(n<=8, 3, 4), float32]");
}

TEST(Specialize, AStaticModuleIsReturnedAsItIs) {
  IRModule fixed = infer_type(parse_module(kStatic, "t.sy"));
  IRModule same = specialize_for_inputs(fixed, {{"x", zeros({2, 3, 4})}, {"y", zeros({2, 12})}});
  EXPECT_EQ(same.lookup("main").get(), fixed.lookup("main").get());
}

}  // namespace specialize_test
}  // namespace switchyard
