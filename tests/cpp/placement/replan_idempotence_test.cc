// Planning is idempotent: planning a planned module changes nothing, and the
// incremental re-plan after a pass that inserts nodes places only those, never
// moving a node that already had a device. A re-plan that moved a placed
// constant blamed the user's pass for a device_copy it never touched (issue 39).
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>
#include <set>

#include "analysis/placement_check.h"
#include "ir/functor.h"
#include "ir/structural_equal.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "placement/place_new_nodes.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "support/random_module.h"
#include "text/parser.h"
#include "text/printer.h"
#include "transform/infer_type.h"
#include "transform/instruments.h"

namespace switchyard {
namespace replan_idempotence_test {

const CompilationConfig& two_cpus() {
  static const CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
  return config;
}

// A random module planned on cpu:0 and cpu:1; nullopt when its random wishes
// contradict each other (planning reports those, which other tests cover).
std::optional<IRModule> random_planned_module(uint64_t seed) {
  RandomModuleOptions options;
  options.num_nodes = 4 + int(seed % 20);
  options.wish_probability = 0.3;
  try {
    return plan_devices(infer_type(random_module(seed, options)), two_cpus()).module;
  } catch (const Error&) {
    return std::nullopt;
  }
}

TEST(ReplanIdempotence, TheReportedConstantStaysWhereItWasPlaced) {
  IRModule mod = infer_type(parse_module("def @main(%x: Tensor[(4), float32] @cpu:1) {\n"
                                         "  multiply(%x, 1f)\n"
                                         "}\n",
                                         "issue39.sy"));
  IRModule once = plan_devices(mod, two_cpus()).module;
  IRModule twice = plan_devices(once, two_cpus()).module;
  std::optional<std::string> diff = structural_diff(once, twice);
  EXPECT_FALSE(diff) << *diff;
  std::optional<Violation> violation = check_placement(twice, two_cpus().host_device);
  EXPECT_FALSE(violation) << violation->message << "\n" << print_module(twice);
}

TEST(ReplanIdempotence, PlanningAPlannedRandomModuleChangesNothing) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::optional<IRModule> once = random_planned_module(seed);
    if (!once) continue;
    IRModule twice = plan_devices(*once, two_cpus()).module;
    std::optional<std::string> diff = structural_diff(*once, twice);
    ASSERT_FALSE(diff) << "seed " << seed << ": " << *diff << "\nonce:\n"
                       << print_module(*once) << "twice:\n"
                       << print_module(twice);
    ++checked;
  }
  EXPECT_GE(checked, 200);
}

// A pass that inserts nodes stating no device, written as a user would:
// constructors only. Around some operator calls it puts an identity
// (`add(call, 0f)`, whose root takes the call's device and whose constant
// is new), a cast round trip whose inner cast is unplaced, or a negation of
// an argument twice over (both new, under an already placed call).
class InsertNodes : public ExprMutator {
 public:
  explicit InsertNodes(uint64_t seed) : rng_(seed) {}

  Expr visit_call(const Call& c) override {
    Expr base = ExprMutator::visit_call(c);
    const CallNode* call = as<CallNode>(base);
    const OpNode* op = call ? as<OpNode>(call->op) : nullptr;
    if (!op || op == on_device_op() || op == device_copy_op()) return base;
    switch (rng_() % 4) {
      case 0: return make_op_call("add", {base, make_scalar_f32(0.0f)});
      case 1: {
        Call down = make_op_call("cast", {base}, {{"dtype", std::string("float16")}});
        return make_op_call("cast", {down}, {{"dtype", std::string("float32")}});
      }
      case 2: {
        std::vector<Expr> args = call->args;
        size_t i = rng_() % args.size();
        args[i] = make_op_call("negative", {make_op_call("negative", {args[i]})});
        return with_fields(downcast<CallNode>(base), {.args = std::move(args)});
      }
      default: return base;
    }
  }

 private:
  std::mt19937_64 rng_;
};

Pass insert_nodes(uint64_t seed) {
  return make_function_pass({"InsertNodes", 0, {}, false}, [seed](const Function& f, const IRModule&, const PassContext&) {
    return downcast<FunctionNode>(InsertNodes(seed).mutate(f));
  });
}

// Walks `before` (a pass's output, some nodes unplaced) and `after` (the same
// re-planned) side by side and names the first node of `before` that had a
// full device and has another in `after`. The re-plan may add a device_copy
// above any value, split a tuple value into copied projections, and give a
// constant a new node per consuming device where its consumer is new.
class MovedNodeFinder {
 public:
  std::optional<std::string> find(const IRModule& before, const IRModule& after) {
    for (const auto& [name, fn] : before.functions()) {
      walk(fn, after.lookup(name), true, "@" + name);
      if (found_) return found_;
    }
    return std::nullopt;
  }

 private:
  static const CallNode* inserted_copy(const Expr& before, const Expr& after) {
    const CallNode* copy = as_device_copy(after);
    return copy && !as_device_copy(before) ? copy : nullptr;
  }

  void walk(const Expr& before, const Expr& after, bool consumer_placed, const std::string& path) {
    if (found_ || !visited_.insert({before.get(), after.get(), consumer_placed}).second) return;
    bool placed = before->virtual_device()->is_fully_constrained();
    if (inserted_copy(before, after) || (before->kind() != ExprKind::kTuple && after->kind() == ExprKind::kTuple)) {
      // Between two placed nodes nothing needs a new copy: it would move the value.
      if (consumer_placed && placed) return report(path, "a copy between two placed nodes", before, after);
    }
    if (const CallNode* copy = inserted_copy(before, after)) return walk(before, copy->args[0], consumer_placed, path);
    if (before->kind() != ExprKind::kTuple && after->kind() == ExprKind::kTuple) {
      for (const Expr& field : static_cast<const TupleNode*>(after.get())->fields) {
        Expr projection = field;
        if (const CallNode* copy = inserted_copy(before, projection)) projection = copy->args[0];
        const TupleGetItemNode* item = as<TupleGetItemNode>(projection);
        if (!item) return report(path, "a tuple field that is no projection of the value", before, after);
        walk(before, item->tuple, consumer_placed, path);
      }
      return;
    }
    if (before->kind() != after->kind()) return report(path, "a different kind of node", before, after);
    const VirtualDevice* was = before->virtual_device();
    bool checked = placed && (before->kind() != ExprKind::kConstant || consumer_placed);
    if (checked && after->virtual_device() != was) return report(path, "a moved node", before, after);
    std::vector<Expr> before_children, after_children;
    for_each_child(before, [&](const Expr& c) { before_children.push_back(c); });
    for_each_child(after, [&](const Expr& c) { after_children.push_back(c); });
    if (before_children.size() != after_children.size())
      return report(path, "a different number of children", before, after);
    for (size_t i = 0; i < before_children.size(); ++i)
      walk(before_children[i], after_children[i], placed, path + "." + std::to_string(i));
  }

  void report(const std::string& path, const std::string& what, const Expr& before, const Expr& after) {
    found_ = path + ": " + what + "\n  before: " + print_expr(before) + " @" + before->virtual_device()->str() +
             "\n  after:  " + print_expr(after) + " @" + after->virtual_device()->str();
  }

  std::set<std::tuple<const ExprNode*, const ExprNode*, bool>> visited_;
  std::optional<std::string> found_;
};

TEST(ReplanIdempotence, ARePlanAfterANodeAddingPassMovesNoPlacedNode) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::optional<IRModule> planned = random_planned_module(seed);
    if (!planned) continue;
    PassContext bare;  // the pass's own output, before any re-plan
    IRModule inserted = insert_nodes(seed)(*planned, bare);
    if (!has_unplaced_nodes(inserted)) continue;
    PassContext ctx;
    ctx.place_new_nodes = [](const IRModule& m) { return place_new_nodes(m); };
    ctx.instruments.push_back(std::make_shared<InvariantChecker>());
    IRModule replanned;
    try {
      replanned = insert_nodes(seed)(*planned, ctx);
    } catch (const Error& e) {
      FAIL() << "seed " << seed << ": " << e.message() << "\n" << print_module(inserted);
    }
    EXPECT_FALSE(has_unplaced_nodes(replanned)) << "seed " << seed;
    std::optional<std::string> moved = MovedNodeFinder().find(inserted, replanned);
    ASSERT_FALSE(moved) << "seed " << seed << ": " << *moved << "\npass output:\n"
                        << print_module(inserted) << "re-planned:\n"
                        << print_module(replanned);
    // Once placed, planning again changes nothing.
    std::optional<std::string> diff = structural_diff(replanned, plan_devices(replanned, two_cpus()).module);
    ASSERT_FALSE(diff) << "seed " << seed << ": " << *diff;
    ++checked;
  }
  EXPECT_GE(checked, 150);
}

}  // namespace replan_idempotence_test
}  // namespace switchyard
