// Rewriting with patterns: one ExprMutator sweep per callback, repeated
// until a round changes nothing.
#include "transform/pattern_rewrite.h"

#include "ir/functor.h"
#include "support/error.h"
#include "transform/infer_type.h"
#include "transform/pass.h"

namespace switchyard {

namespace {

constexpr int kMaxRounds = 100;

class PatternRewriter : public ExprMutator {
 public:
  explicit PatternRewriter(const RewriteCallback& callback) : callback_(callback) {}

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
    return replacement ? replacement : post;
  }
  const RewriteCallback& callback_;
};

Expr sweep(const RewriteCallback& callback, const Expr& e, const IRModule* mod) {
  Expr typed = callback.require_type ? infer_expr_type(e, mod) : e;
  return PatternRewriter(callback).mutate(typed);
}

}  // namespace

Expr rewrite(const std::vector<RewriteCallback>& callbacks, const Expr& e, const IRModule* mod) {
  for (const RewriteCallback& c : callbacks)
    if (!c.pattern || !c.rewrite) throw Error(ErrorKind::kUsage, "a rewrite callback needs a pattern and a function");
  Expr current = e;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (const RewriteCallback& c : callbacks) {
      if (c.rewrite_once && round > 0) continue;
      Expr next = sweep(c, current, mod);
      changed = changed || !next.same_as(current);
      current = next;
    }
    if (!changed) return current;
  }
  std::string patterns;
  for (const RewriteCallback& c : callbacks)
    if (!c.rewrite_once) patterns += (patterns.empty() ? "" : ", ") + pattern_to_string(c.pattern);
  throw Error(ErrorKind::kUsage, "rewrite did not settle: " + std::to_string(kMaxRounds) +
                                     " rounds still changed the expression (patterns: " + patterns +
                                     "); does a callback return a new node that its own pattern matches again?");
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
