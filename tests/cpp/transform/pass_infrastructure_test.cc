// The pass infrastructure: opt levels, enabled and disabled passes, required
// passes, instrument order, typed configuration, and function passes that
// keep the placement of a function they rebuild from scratch.
#include <gtest/gtest.h>

#include "op/registry.h"
#include "pass_test_util.h"
#include "support/error.h"
#include "transform/infer_type_pass.h"
#include "transform/simplify_expr.h"

namespace switchyard {
namespace pass_infrastructure_test {

using testing::kSmall;
using testing::typed;


// A pass that counts its runs and changes nothing.
Pass counting_pass(const std::string& name, int opt_level, int* runs, std::vector<std::string> required = {}) {
  return make_module_pass({name, opt_level, std::move(required)}, [runs](const IRModule& mod, const PassContext&) {
    ++*runs;
    return mod;
  });
}

TEST(PassInfrastructure, OptLevelsAndEnabledPasses) {
  IRModule mod = typed(kSmall);
  int runs = 0;
  Pass aggressive = counting_pass("Aggressive", 3, &runs);
  PassContext ctx;  // opt level 2
  aggressive(mod, ctx);
  EXPECT_EQ(runs, 0);
  ctx.opt_level = 3;
  aggressive(mod, ctx);
  EXPECT_EQ(runs, 1);
  ctx.opt_level = 0;
  ctx.enabled_passes = {"Aggressive"};
  aggressive(mod, ctx);
  EXPECT_EQ(runs, 2);
}

TEST(PassInfrastructure, DisabledPassesNeverRun) {
  IRModule mod = typed(kSmall);
  int runs = 0;
  PassContext ctx;
  ctx.disabled_passes = {"Cheap"};
  ctx.enabled_passes = {"Cheap"};
  Sequential({counting_pass("Cheap", 0, &runs)})(mod, ctx);
  EXPECT_EQ(runs, 0);
  // The real passes honour it too: a disabled SimplifyExpr leaves the add.
  ctx.disabled_passes = {"SimplifyExpr"};
  EXPECT_TRUE(SimplifyExpr()(mod, ctx).lookup("main").same_as(mod.lookup("main")));
}

TEST(PassInfrastructure, RequiredPassesMustRunBefore) {
  IRModule untyped = parse_module(kSmall, "small.sy");
  int runs = 0;
  Pass needs = counting_pass("NeedsPlanning", 0, &runs, {"PlanDevices"});
  try {
    Sequential({InferType(), needs})(untyped);
    FAIL() << "expected a missing-requirement error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kPass);
    EXPECT_EQ(e.message(), "pass 'NeedsPlanning' requires 'PlanDevices' to run before it");
  }
  EXPECT_EQ(runs, 0);
  // Running InferType earlier in the sequence, or a module already typed,
  // satisfies a requirement on it.
  Sequential({InferType(), SimplifyExpr()})(untyped);
  Sequential({SimplifyExpr()})(typed(kSmall));
}

// Records every instrument call, tagged with the instrument's name.
class RecordingInstrument : public PassInstrument {
 public:
  RecordingInstrument(std::string tag, std::vector<std::string>* log) : tag_(std::move(tag)), log_(log) {}
  std::string name() const override { return tag_; }
  void enter_context() override { log_->push_back(tag_ + " enter"); }
  void exit_context() override { log_->push_back(tag_ + " exit"); }
  void run_before_pass(const IRModule&, const PassInfo& info) override { log_->push_back(tag_ + " before " + info.name); }
  void run_after_pass(const IRModule&, const PassInfo& info) override { log_->push_back(tag_ + " after " + info.name); }

 private:
  std::string tag_;
  std::vector<std::string>* log_;
};

TEST(PassInfrastructure, InstrumentsRunInOrderAroundEveryLeafPass) {
  std::vector<std::string> log;
  PassContext ctx;
  ctx.instruments = {std::make_shared<RecordingInstrument>("A", &log),
                     std::make_shared<RecordingInstrument>("B", &log)};
  int runs = 0;
  {
    PassContext::Scope scope(ctx);
    Sequential({counting_pass("First", 0, &runs), counting_pass("Skipped", 9, &runs),
                counting_pass("Second", 0, &runs)})(typed(kSmall));
  }
  EXPECT_EQ(log, (std::vector<std::string>{"A enter", "B enter", "A before First", "B before First", "A after First",
                                           "B after First", "A before Second", "B before Second", "A after Second",
                                           "B after Second", "A exit", "B exit"}));
}

TEST(PassInfrastructure, TypedConfigurationValues) {
  PassContext ctx;
  ctx.config = {{"inline.max_calls", int64_t(3)}, {"fuse.enabled", true}, {"dump.dir", std::string("/tmp")}};
  EXPECT_EQ(ctx.config_int("inline.max_calls", 8), 3);
  EXPECT_EQ(ctx.config_int("absent", 8), 8);
  EXPECT_TRUE(ctx.config_bool("fuse.enabled", false));
  EXPECT_EQ(ctx.config_string("dump.dir", ""), "/tmp");
  try {
    ctx.config_int("fuse.enabled", 0);
    FAIL() << "expected a type error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.message(), "configuration 'fuse.enabled' must be an integer");
  }
}

TEST(PassInfrastructure, AFunctionPassBuildingFromScratchKeepsThePlacement) {
  IRModule mod = typed(kSmall);
  // Builds @main anew: fresh parameter, fresh body, no device or span anywhere
  // on the function or its parameter.
  Pass rebuild = make_function_pass({"Rebuild", 0, {}}, [](const Function& fn, const IRModule&, const PassContext&) {
    Var x = make_var("x", fn->params[0]->type_annotation);
    return make_function({x}, make_op_call("negative", {x}, {}, {.virtual_device = fn->virtual_device()}),
                         fn->ret_type);
  });
  const Function& before = mod.lookup("main");
  Function after = rebuild(mod).lookup("main");
  EXPECT_FALSE(after.same_as(before));
  EXPECT_EQ(after->virtual_device()->str(), "cpu:1");
  EXPECT_EQ(after->params[0]->virtual_device()->str(), "cpu:1");
  EXPECT_EQ(after->span(), before->span());
  // The body uses the placed parameter, not the unplaced one it was built with.
  const CallNode* body = as<CallNode>(after->body);
  ASSERT_NE(body, nullptr);
  EXPECT_TRUE(body->args[0].same_as(after->params[0]));
}

}  // namespace pass_infrastructure_test
}  // namespace switchyard
