// Rewriting with patterns: one ExprMutator sweep per callback, repeated
// until a round changes nothing.
#include "transform/pattern_rewrite.h"

#include <algorithm>

#include "ir/functor.h"
#include "support/error.h"
#include "transform/infer_type.h"
#include "transform/pass.h"

namespace switchyard {

namespace {

constexpr int kMaxRounds = 100;

// "Doubles: is_op(...)(...)": a callback as errors name it.
std::string callback_text(const RewriteCallback& c) {
  return (c.name.empty() ? std::string() : c.name + ": ") + pattern_to_string(c.pattern);
}

[[noreturn]] void did_not_settle(const RewriteCallback* runaway, const std::vector<RewriteCallback>& callbacks,
                                 const std::string& why) {
  std::string named;
  if (runaway) {
    named = callback_text(*runaway);
  } else {
    for (const RewriteCallback& c : callbacks)
      if (!c.rewrite_once) named += (named.empty() ? "" : ", ") + callback_text(c);
  }
  throw Error(ErrorKind::kUsage, "rewrite did not settle within the limit of " + std::to_string(kMaxRounds) +
                                     " rounds: " + why + " (" + named +
                                     "); does a callback return a new node that its own pattern matches again?");
}

// The replacements all callbacks may make: as many as kMaxRounds rounds that
// each replace every node of the input once.
struct ReplacementBudget {
  const std::vector<RewriteCallback>& callbacks;
  uint64_t input_nodes = 0;
  uint64_t limit = 0;
  uint64_t made = 0;

  void spend(const RewriteCallback& by) {
    if (++made <= limit) return;
    did_not_settle(&by, callbacks,
                   "its callbacks made " + std::to_string(made) + " replacements, more than " +
                       std::to_string(kMaxRounds) + " rounds over the input's " + std::to_string(input_nodes) +
                       " nodes would");
  }
};

class PatternRewriter : public ExprMutator {
 public:
  PatternRewriter(const RewriteCallback& callback, ReplacementBudget& budget) : callback_(callback), budget_(budget) {}

  Expr visit_call(const Call& n) override { return try_rewrite(n, ExprMutator::visit_call(n)); }
  Expr visit_constant(const Constant& n) override { return try_rewrite(n, ExprMutator::visit_constant(n)); }
  Expr visit_function(const Function& n) override { return try_rewrite(n, ExprMutator::visit_function(n)); }
  Expr visit_let(const Let& n) override { return try_rewrite(n, ExprMutator::visit_let(n)); }
  Expr visit_if(const If& n) override { return try_rewrite(n, ExprMutator::visit_if(n)); }
  Expr visit_tuple(const Tuple& n) override { return try_rewrite(n, ExprMutator::visit_tuple(n)); }
  Expr visit_tuple_get_item(const TupleGetItem& n) override {
    return try_rewrite(n, ExprMutator::visit_tuple_get_item(n));
  }

 private:
  Expr try_rewrite(const Expr& pre, const Expr& post) {
    MatchMap node_map;
    if (!match(callback_.pattern, post, &node_map)) return post;
    Expr replacement = callback_.rewrite(pre, post, node_map);
    if (!replacement || replacement.same_as(post)) return post;
    budget_.spend(callback_);
    return replacement;
  }
  const RewriteCallback& callback_;
  ReplacementBudget& budget_;
};

Expr sweep(const RewriteCallback& callback, const Expr& e, const IRModule* mod, ReplacementBudget& budget) {
  Expr typed = callback.require_type ? infer_expr_type(e, mod) : e;
  return PatternRewriter(callback, budget).mutate(typed);
}

}  // namespace

Expr rewrite(const std::vector<RewriteCallback>& callbacks, const Expr& e, const IRModule* mod) {
  for (const RewriteCallback& c : callbacks)
    if (!c.pattern || !c.rewrite) throw Error(ErrorKind::kUsage, "a rewrite callback needs a pattern and a function");
  ReplacementBudget budget{callbacks};
  post_order_visit(e, [&](const Expr&) { ++budget.input_nodes; });
  budget.limit = uint64_t(kMaxRounds) * callbacks.size() * std::max<uint64_t>(budget.input_nodes, 1);
  Expr current = e;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (const RewriteCallback& c : callbacks) {
      if (c.rewrite_once && round > 0) continue;
      Expr next = sweep(c, current, mod, budget);
      changed = changed || !next.same_as(current);
      current = next;
    }
    if (!changed) return current;
  }
  did_not_settle(nullptr, callbacks, std::to_string(kMaxRounds) + " rounds still changed the expression");
}

IRModule rewrite(const std::vector<RewriteCallback>& callbacks, const IRModule& mod) {
  return map_functions(mod, [&](const std::string& name, const Function& fn) {
    Expr r = rewrite(callbacks, fn, &mod);
    const FunctionNode* f = as<FunctionNode>(r);
    if (!f) throw Error(ErrorKind::kUsage, "a rewrite callback turned function @" + name + " into a " +
                                               expr_kind_name(r->kind()));
    return Function(f);
  });
}

}  // namespace switchyard
