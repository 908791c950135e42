// Types never go stale across passes: a pass that leaves nodes untyped gets
// InferType run before the next pass that needs types (in a Sequential or
// alone), and the invariant checker names a pass that leaves a stale type,
// an untyped node it claimed to type, or a fused kernel without Primitive.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type_pass.h"
#include "transform/instruments.h"

namespace switchyard {
namespace stale_types_test {

// A two-layer perceptron without devices (spans name "pass_test.sy").
constexpr const char* kMlp = R"(
def @main(%x: Tensor[(1, 8), float32], %w1: Tensor[(4, 8), float32], %b1: Tensor[(4), float32],
          %w2: Tensor[(2, 4), float32], %b2: Tensor[(2), float32]) -> Tensor[(1, 2), float32] {
  %0 = nn.dense(%x, %w1);
  %1 = add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2);
  add(%3, %b2)
}
)";

// relu(x) -> maximum(x, 0f), written as a TVM user would: new nodes, no types.
class ReluToMaximum : public ExprMutator {
 public:
  Expr visit_call(const Call& c) override {
    Expr base = ExprMutator::visit_call(c);
    if (const CallNode* relu = as_op_call(base, "nn.relu"))
      return make_op_call("maximum", {relu->args[0], make_scalar_f32(0)});
    return base;
  }
};

Pass relu_to_maximum(bool preserves_types) {
  return make_function_pass({"ReluToMaximum", 0, {}, preserves_types},
                            [](const Function& f, const IRModule&, const PassContext&) {
                              return downcast<FunctionNode>(ReluToMaximum().mutate(f));
                            });
}

size_t kernel_calls(const IRModule& mod) {
  return testing::nodes_where(mod, [](const Expr& e) {
           const CallNode* c = as<CallNode>(e);
           const FunctionNode* f = c ? as<FunctionNode>(c->op) : nullptr;
           return f && f->is_primitive();
         }).size();
}

// The Error(kInvariant) the checker throws running `passes` on `mod`.
std::string invariant_message(const IRModule& mod, std::vector<Pass> passes) {
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InvariantChecker>());
  try {
    Sequential(std::move(passes))(mod, ctx);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvariant);
    return e.message();
  }
  ADD_FAILURE() << "no invariant violation reported";
  return "";
}

TEST(StaleTypes, APassLeavingNodesUntypedMakesTheFunctionUntyped) {
  IRModule mod = relu_to_maximum(false)(testing::typed(kMlp));
  EXPECT_FALSE(pass_in_effect("InferType", mod));
}

TEST(StaleTypes, InferTypeRunsAgainBeforeTheNextPassThatNeedsTypesAndFusionIsNotWorse) {
  // InferType ran first in the sequence; the rewrite then untyped nodes, so
  // it runs again before FuseOps: two kernels (dense+add+maximum, dense+add),
  // not three (an untyped maximum fused into nothing).
  PassContext ctx;
  auto timing = std::make_shared<TimingInstrument>();
  ctx.instruments.push_back(timing);
  IRModule out = Sequential({InferType(), relu_to_maximum(false), FuseOps()})(parse_module(kMlp, "pass_test.sy"), ctx);
  EXPECT_EQ(kernel_calls(out), 2u);
  EXPECT_TRUE(pass_in_effect("InferType", out));
  std::vector<std::string> ran;
  for (const auto& entry : timing->entries()) ran.push_back(entry.pass);
  EXPECT_EQ(ran, (std::vector<std::string>{"InferType", "ReluToMaximum", "InferType", "FuseOps"}));
  // Run alone, outside any Sequential, the same holds.
  EXPECT_EQ(kernel_calls(FuseOps()(relu_to_maximum(false)(testing::typed(kMlp)))), 2u);
}

TEST(StaleTypes, TheCheckerNamesAPassThatClaimsTypesAndLeavesANodeUntyped) {
  std::string message = invariant_message(testing::typed(kMlp), {relu_to_maximum(true)});
  EXPECT_NE(message.find("after pass 'ReluToMaximum': the pass left this node untyped (it should have type "
                         "Tensor[(1, 4), float32]), though it preserves types and its input was typed"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("node: maximum(add(...), 0:float32) (no device)"), std::string::npos) << message;
  EXPECT_NE(message.find("span: pass_test.sy:6:8"), std::string::npos) << message;
  // A pass that does not claim it is fine: InferType runs before the next pass needing types.
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InvariantChecker>());
  EXPECT_NO_THROW(Sequential({relu_to_maximum(false), FuseOps()})(testing::typed(kMlp), ctx));
}

TEST(StaleTypes, TheCheckerNamesAPassThatLeavesAStaleType) {
  // Gives the first add a type its operands do not give, as a pass copying
  // an old node's type onto a new one would.
  Pass stale = make_function_pass({"StaleAdd", 0, {}}, [](const Function& f, const IRModule&, const PassContext&) {
    class Stale : public ExprMutator {
     public:
      Expr visit_call(const Call& c) override {
        Expr base = ExprMutator::visit_call(c);
        const CallNode* add = as_op_call(base, "add");
        if (!add || !as_op_call(add->args[0], "nn.dense") || !as<VarNode>(downcast<CallNode>(add->args[0])->args[0]))
          return base;
        return with_fields(Call(add), {.checked_type = tensor_type({9}, DType::kFloat32)});
      }
    };
    return downcast<FunctionNode>(Stale().mutate(f));
  });
  std::string message = invariant_message(testing::typed(kMlp), {stale});
  EXPECT_NE(message.find("after pass 'StaleAdd': the node's checked type Tensor[(9), float32] is stale: its "
                         "operands give Tensor[(1, 4), float32]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("span: pass_test.sy:5:8"), std::string::npos) << message;
}

TEST(StaleTypes, TheCheckerNamesAPassThatDropsPrimitiveFromAFusedKernel) {
  // Rebuilds every called function from its parameters and body, as
  // `relay.Function(f.params, f.body)` does, losing the attributes.
  Pass rebuild = make_function_pass({"RebuildKernels", 0, {}}, [](const Function& f, const IRModule&, const PassContext&) {
    class Rebuild : public ExprMutator {
     public:
      Expr visit_function(const Function& fn) override {
        if (!fn->is_primitive()) return ExprMutator::visit_function(fn);
        return make_function(fn->params, fn->body, fn->ret_type, Attrs(),
                             {fn->virtual_device(), fn->span(), fn->checked_type()});
      }
    };
    return downcast<FunctionNode>(Rebuild().mutate(f));
  });
  std::string message = invariant_message(testing::typed(kMlp), {FuseOps(), rebuild});
  EXPECT_NE(message.find("after pass 'RebuildKernels': a fused function lost its 'Primitive' attribute"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("span: fused(pass_test.sy:4:8, pass_test.sy:5:8, pass_test.sy:6:8)"), std::string::npos)
      << message;
}

}  // namespace stale_types_test
}  // namespace switchyard
