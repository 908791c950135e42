// InferType carries symbolic dimensions through the relations marked
// symbolic-aware and refuses them, with the call's span, everywhere else;
// passes not marked symbolic-aware refuse a module that has one.
#include <gtest/gtest.h>

#include "interp/evaluate.h"
#include "support/error.h"
#include "text/parser.h"
#include "transform/fold_constant.h"
#include "transform/infer_type.h"
#include "transform/infer_type_pass.h"
#include "transform/simplify_expr.h"

namespace switchyard {
namespace symbolic_infer_type_test {

// An attention block's shapes over a batch of n images.
constexpr const char* kAttention = R"(def @main(%x: Tensor[(n<=64, 196, 768), float32], %w: Tensor[(2304, 768), float32],
          %g: Tensor[(768), float32], %b: Tensor[(768), float32]) {
  %0 = nn.layer_norm(%x, %g, %b);
  %1 = nn.dense(%0, %w);
  %2 = reshape(%1, newshape=[-1, 196, 3, 12, 64]);
  %3 = transpose(%2, axes=[2, 0, 3, 1, 4]);
  %4 = add(%3, %3);
  %5 = reshape(%1, newshape=[0, 0, 36, 64]);
  %6 = transpose(%5, axes=[0, 2, 1, 3]);
  %7 = matmul(%6, transpose(%6, axes=[0, 1, 3, 2]));
  %8 = nn.softmax(%7);
  %9 = reshape(%8, newshape=[-1, 196]);
  (%8, %9, %4)
}
)";

std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    return e.span().to_string() + ": " + e.message();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(SymbolicInferType, AttentionShapesStaySymbolic) {
  IRModule typed = infer_type(parse_module(kAttention, "attention.sy"));
  EXPECT_EQ(type_to_string(typed.lookup("main")->body->checked_type()),
            "(Tensor[(n<=64, 36, 196, 196), float32], Tensor[(7056*n<=64, 196), float32], Tensor[(3, n<=64, 12, 196, "
            "64), float32])");
}

TEST(SymbolicInferType, AnOperatorNotSymbolicAwareIsRefusedAtItsCall) {
  std::string text = "def @main(%x: Tensor[(4, n), float32]) {\n  %0 = nn.relu(%x);\n  squeeze(%0)\n}\n";
  EXPECT_EQ(error_of([&] { infer_type(parse_module(text, "squeeze.sy")); }, ErrorKind::kType),
            "squeeze.sy:3:3: 'squeeze' does not take symbolic dimensions yet: argument 0 is Tensor[(4, n), float32] "
            "(dimension 1 is n)");
}

TEST(SymbolicInferType, StaticPassesRefuseASymbolicModule) {
  IRModule typed = infer_type(parse_module("def @main(%x: Tensor[(n, 3), float32]) {\n  add(%x, 0f)\n}\n", "s.sy"));
  EXPECT_EQ(error_of([&] { SimplifyExpr()(typed); }, ErrorKind::kPass),
            "s.sy:1:11: pass 'SimplifyExpr' does not take symbolic dimensions yet: dimension n of %x is symbolic "
            "(Tensor[(n, 3), float32])");
  EXPECT_EQ(error_of([&] { FoldConstant()(typed); }, ErrorKind::kPass),
            "s.sy:1:11: pass 'FoldConstant' does not take symbolic dimensions yet: dimension n of %x is symbolic "
            "(Tensor[(n, 3), float32])");
  IRModule again = InferType()(typed);  // InferType itself takes them
  EXPECT_EQ(type_to_string(again.lookup("main")->ret_type), "Tensor[(n, 3), float32]");
}

TEST(SymbolicInferType, TheInterpreterRefusesASymbolicParameter) {
  IRModule typed = infer_type(parse_module("def @main(%x: Tensor[(n, 3), float32]) {\n  %x\n}\n", "s.sy"));
  NDArray input(DType::kFloat32, {2, 3});
  EXPECT_EQ(error_of([&] { evaluate(typed, {{"x", input}}); }, ErrorKind::kUsage),
            "s.sy:1:11: parameter 'x' of @main has the symbolic type Tensor[(n, 3), float32]; the interpreter runs "
            "static shapes only yet");
}

}  // namespace symbolic_infer_type_test
}  // namespace switchyard
