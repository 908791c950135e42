// Rule sets: the operator index and the one-sweep rewriter.
#include "transform/pattern_rules.h"

#include <algorithm>
#include <optional>

#include "ir/functor.h"
#include "support/error.h"

namespace switchyard {

RewriteRule replace_by(std::string name, Pattern pattern, Pattern result) {
  return {.name = std::move(name), .pattern = std::move(pattern), .result = std::move(result), .build = nullptr};
}

RewriteRule rebuild(std::string name, Pattern pattern, std::function<Expr(const Call&, const MatchMap&)> build) {
  return {.name = std::move(name), .pattern = std::move(pattern), .result = Pattern(), .build = std::move(build)};
}

Expr as_replacement(const Call& call, const Expr& x) {
  if (!x || !x->checked_type() || !type_equal(x->checked_type(), call->checked_type())) return Expr();
  if (x->virtual_device() != call->virtual_device()) return Expr();
  return x;
}

bool spelled_out_calls_on_device_of(const Call& call, const MatchMap& match) {
  for (const auto& [pattern, expr] : match)
    if (pattern->kind != PatternKind::kWildcard && is<CallNode>(expr) &&
        expr->virtual_device() != call->virtual_device())
      return false;
  return true;
}

namespace {

// The operators a call matching `p` may call; nullopt when any.
std::optional<std::vector<std::string>> root_ops(const Pattern& p) {
  switch (p->kind) {
    case PatternKind::kOp: return std::vector<std::string>{p->name};
    case PatternKind::kCall: return root_ops(p->operands[0]);
    case PatternKind::kAttr:
    case PatternKind::kType:
    case PatternKind::kPredicate: return root_ops(p->operands[0]);
    case PatternKind::kAlternative: {
      auto left = root_ops(p->operands[0]), right = root_ops(p->operands[1]);
      if (!left || !right) return std::nullopt;
      left->insert(left->end(), right->begin(), right->end());
      return left;
    }
    default: return std::nullopt;
  }
}

}  // namespace

RuleSet::RuleSet(std::vector<RewriteRule> rules) : rules_(std::move(rules)) {
  for (size_t i = 0; i < rules_.size(); ++i) {
    const RewriteRule& r = rules_[i];
    if (r.name.empty() || !r.pattern || bool(r.result) == bool(r.build))
      throw Error(ErrorKind::kUsage, "rewrite rule " + std::to_string(i) + " ('" + r.name +
                                         "') needs a name, a pattern, and either a result or a build function");
    if (auto ops = root_ops(r.pattern)) {
      for (const std::string& op : *ops) {
        std::vector<size_t>& list = by_op_[op];
        if (list.empty() || list.back() != i) list.push_back(i);
      }
    } else {
      any_op_.push_back(i);
    }
  }
  // A rule for any operator is a candidate for every call, in rule order.
  for (auto& [op, list] : by_op_) {
    std::vector<size_t> merged;
    std::merge(list.begin(), list.end(), any_op_.begin(), any_op_.end(), std::back_inserter(merged));
    list = std::move(merged);
  }
}

const std::vector<size_t>& RuleSet::candidates(const std::string& op_name) const {
  auto found = by_op_.find(op_name);
  return found != by_op_.end() ? found->second : any_op_;
}

namespace {

class RuleRewriter : public ExprMutator {
 public:
  RuleRewriter(const RuleSet& rules, std::vector<std::string>* applied) : rules_(rules), applied_(applied) {}

  Expr visit_call(const Call& original) override {
    Call call = downcast<CallNode>(ExprMutator::visit_call(original));
    const OpNode* op = as<OpNode>(call->op);
    // Rules compare types, so an untyped call is left alone.
    if (!op || !call->checked_type()) return call;
    for (size_t i : rules_.candidates(op->name)) {
      const RewriteRule& rule = rules_.rules()[i];
      MatchMap& m = match_;
      if (!match(rule.pattern, call, &m)) continue;
      Expr out;
      if (rule.result) {
        auto matched = m.find(rule.result.get());
        if (matched != m.end()) out = as_replacement(call, matched->second);
      } else {
        out = rule.build(call, m);
      }
      if (!out) continue;
      if (applied_) applied_->push_back(rule.name);
      return out;
    }
    return call;
  }

 private:
  const RuleSet& rules_;
  std::vector<std::string>* applied_;
  MatchMap match_;  // reused: a million-call chain would otherwise allocate a map per rule tried
};

}  // namespace

Expr RuleSet::apply(const Expr& e, std::vector<std::string>* applied) const {
  return RuleRewriter(*this, applied).mutate(e);
}

}  // namespace switchyard
