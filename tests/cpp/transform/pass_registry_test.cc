// The pass registry (each pass declared once, in its own PassInfo), required
// passes run on demand, map_functions and the diagnostics sink.
#include <gtest/gtest.h>

#include <set>

#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "transform/instruments.h"
#include "transform/pass_registry.h"
#include "transform/simplify_expr.h"

namespace switchyard {
namespace pass_registry_test {

using testing::kSmall;
using testing::typed;


std::vector<std::string> timed_passes(const TimingInstrument& timing) {
  std::vector<std::string> out;
  for (const auto& e : timing.entries()) out.push_back(e.pass);
  return out;
}

TEST(PassRegistry, EachPassIsKnownByTheNameItsFactoryGivesIt) {
  std::vector<std::string> names;
  for (const Pass& p : registered_passes()) names.push_back(p.name());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const char* name : {"InferType", "SimplifyExpr", "FoldConstant", "EliminateCommonSubexpr",
                           "DeadCodeElimination", "FuseOps", "Inline", "ToANormalForm", "ToGraphNormalForm"})
    EXPECT_TRUE(registered_pass(name)) << name;
  EXPECT_FALSE(registered_pass("PlanDevices"));  // it needs the build's devices
  EXPECT_FALSE(registered_pass("NoSuchPass"));
  std::optional<Pass> fuse = registered_pass("FuseOps");
  ASSERT_TRUE(fuse);
  EXPECT_EQ(fuse->info().opt_level, 0);
  EXPECT_EQ(fuse->info().required, std::vector<std::string>{"InferType"});
}

TEST(PassRegistry, AMissingRequiredPassRunsFirstUnderTheSameContext) {
  IRModule untyped = parse_module(kSmall, "small.sy");
  auto timing = std::make_shared<TimingInstrument>();
  PassContext ctx;
  ctx.instruments = {timing};
  IRModule out = Sequential({SimplifyExpr()})(untyped, ctx);
  EXPECT_EQ(timed_passes(*timing), (std::vector<std::string>{"InferType", "SimplifyExpr"}));
  EXPECT_TRUE(pass_in_effect("InferType", out));
  // The add of zero is gone, which SimplifyExpr does only on typed nodes.
  EXPECT_EQ(as<CallNode>(out.lookup("main")->body), nullptr);
}

TEST(PassRegistry, ARequirementInEffectOrRunEarlierIsNotRunAgain) {
  auto timing = std::make_shared<TimingInstrument>();
  PassContext ctx;
  ctx.instruments = {timing};
  Sequential({SimplifyExpr()})(typed(kSmall), ctx);
  EXPECT_EQ(timed_passes(*timing), std::vector<std::string>{"SimplifyExpr"});
}

TEST(PassRegistry, ARequiredPassTheContextDisablesIsStillAnError) {
  PassContext ctx;
  ctx.disabled_passes = {"InferType"};
  try {
    Sequential({SimplifyExpr()})(parse_module(kSmall, "small.sy"), ctx);
    FAIL() << "expected a missing-requirement error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPass);
    EXPECT_EQ(e.message(), "pass 'SimplifyExpr' requires 'InferType' to run before it");
  }
}

TEST(MapFunctions, LeavesPrimitiveFunctionsAlone) {
  IRModule mod = typed(kSmall);
  Var p = make_var("p", mod.lookup("main")->params[0]->type_annotation);
  mod.add("kernel", make_function({p}, make_op_call("nn.relu", {p}), p->type_annotation,
                                  make_attrs({{"Primitive", int64_t(1)}})));
  std::vector<std::string> seen;
  IRModule out = map_functions(mod, [&](const std::string& name, const Function& fn) {
    seen.push_back(name);
    return fn;
  });
  EXPECT_EQ(seen, std::vector<std::string>{"main"});
  EXPECT_TRUE(out.lookup("kernel").same_as(mod.lookup("kernel")));
}

TEST(DiagnosticSink, KeepsEachDiagnosticAndShowsItToTheObserverAsItArrives) {
  std::vector<std::string> shown;
  auto sink = std::make_shared<DiagnosticSink>([&](const DiagnosticSink::Diagnostic& d) { shown.push_back(d.text); });
  PassContext ctx;
  ctx.diagnostics = sink;
  Pass warns = make_module_pass({"Warns", 0, {}}, [](const IRModule& mod, const PassContext& c) {
    c.diagnostics->report({"Warns", "x.sy:1:1: warning: careful"});
    return mod;
  });
  PassContext copy = ctx;  // copies share the sink
  Sequential({warns})(typed(kSmall), copy);
  EXPECT_EQ(shown, std::vector<std::string>{"x.sy:1:1: warning: careful"});
  ASSERT_EQ(sink->diagnostics().size(), 1u);
  EXPECT_EQ(sink->diagnostics()[0].pass, "Warns");
}

}  // namespace pass_registry_test
}  // namespace switchyard
