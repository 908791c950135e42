// The invariant checker against deliberately broken passes: the error names
// the pass, the node and its span; well-behaved passes pass it.
#include <gtest/gtest.h>

#include "ir/functor.h"
#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "support/test_paths.h"
#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/instruments.h"
#include "transform/simplify_expr.h"

namespace switchyard {
namespace invariant_checker_test {

// tests/data/mlp_two_devices.planned.sy, parsed, typed and marked
// planned (spans name "mlp_two_devices.planned.sy").
IRModule planned_mlp() {
  std::string text = testing::read_file(testing::example_models_dir() + "/mlp_two_devices.planned.sy");
  register_source_text("mlp_two_devices.planned.sy", text);
  IRModule mod = infer_type(parse_module(text, "mlp_two_devices.planned.sy"));
  mod.set_devices(CompilationConfig::parse("cpu:0,cpu:1").devices);
  mod.set_device_planned(true);
  return mod;
}

// Runs `passes` under a context with the invariant checker; returns the
// Error(kInvariant) it throws.
Error invariant_error(const IRModule& mod, std::vector<Pass> passes) {
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InvariantChecker>());
  try {
    Sequential(std::move(passes))(mod, ctx);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvariant);
    return e;
  }
  ADD_FAILURE() << "no invariant violation reported";
  return Error(ErrorKind::kUsage, "");
}

// Moves the second layer's dense to cpu:0 without a copy of its input.
class DenseMover : public ExprMutator {
 public:
  Expr visit_call(const Call& call) override {
    Expr rebuilt = ExprMutator::visit_call(call);
    const CallNode* dense = as_op_call(rebuilt, "nn.dense");
    if (!dense || dense->virtual_device()->str() != "cpu:1") return rebuilt;
    return with_fields(Call(dense), {.virtual_device = VirtualDevice::for_device(DeviceKind::kCPU, 0)});
  }
};

TEST(InvariantChecker, NamesThePassTheCallAndItsSpanWhenACallMovesWithoutACopy) {
  Pass mover = make_module_pass({"MoveDense", 0, {}}, [](const IRModule& mod, const PassContext&) {
    return DenseMover().mutate_module(mod);
  });
  Error e = invariant_error(planned_mlp(), {SimplifyExpr(), mover, DeadCodeElimination()});
  const std::string& message = e.message();
  EXPECT_NE(message.find("after pass 'MoveDense'"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 0 of 'nn.dense' lives on cpu:1 but is consumed on cpu:0 without a device_copy"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("node: nn.dense(device_copy(...), %w2) @cpu:0"), std::string::npos) << message;
  EXPECT_NE(message.find("mlp_two_devices.planned.sy:13:8"), std::string::npos) << message;
  EXPECT_EQ(e.span().to_string(), "mlp_two_devices.planned.sy:13:8");
}

TEST(InvariantChecker, NamesThePassAndTheNodeWhenRebuiltNodesStateNoDevice) {
  // The function pass restores the function's and its parameters' placement;
  // the new body states none.
  Pass rebuild = make_function_pass({"RebuildMain", 0, {}}, [](const Function& fn, const IRModule&, const PassContext&) {
    std::vector<Var> params;
    for (const Var& p : fn->params) params.push_back(make_var(p->name_hint, p->type_annotation));
    Expr hidden = make_op_call("nn.dense", {params[0], params[1]});
    Expr out = make_op_call("nn.dense", {make_op_call("nn.relu", {hidden}), params[3]});
    return make_function(params, out, fn->ret_type);
  });
  Error e = invariant_error(planned_mlp(), {rebuild});
  const std::string& message = e.message();
  EXPECT_NE(message.find("after pass 'RebuildMain'"), std::string::npos) << message;
  EXPECT_NE(message.find("Call is not fully placed: its device is an unconstrained device"), std::string::npos)
      << message;
  EXPECT_NE(message.find("node: nn.dense(%x, %w1) (no device)"), std::string::npos) << message;
}

TEST(InvariantChecker, TheDefaultPassesKeepTheInvariants) {
  PassContext ctx;
  auto checker = std::make_shared<InvariantChecker>();
  ctx.instruments.push_back(checker);
  IRModule mod = planned_mlp();
  IRModule out =
      Sequential({SimplifyExpr(), FoldConstant(), EliminateCommonSubexpr(), DeadCodeElimination()})(mod, ctx);
  // Nodes no pass rebuilt are credited to the first pass that saw them.
  EXPECT_EQ(checker->last_pass_touching(out.lookup("main").get()), "SimplifyExpr");
}

}  // namespace invariant_checker_test
}  // namespace switchyard
