// Rewrite rules as data: a named pattern and what replaces its match, so a
// pass such as SimplifyExpr is a list of one-line rules (simplify_rules.h).
// Unlike rewrite() (pattern_rewrite.h), which sweeps the whole expression
// once per callback until nothing changes, a rule set rewrites in one sweep:
// each operator call, after its operands, is offered to the rules that can
// match its operator, in order.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "transform/pattern.h"

namespace switchyard {

struct RewriteRule {
  std::string name;
  Pattern pattern;  // matched against a typed operator call
  // The replacement: the expression `result` (a node of `pattern`) matched,
  // taken only when it can stand in for the call (as_replacement); or, when
  // `result` is null, what `build` makes of the match (null: no rewrite).
  Pattern result;
  std::function<Expr(const Call& call, const MatchMap& match)> build;
};

// A rule that replaces a match by what the pattern node `result` matched.
RewriteRule replace_by(std::string name, Pattern pattern, Pattern result);
// A rule whose replacement `build` makes.
RewriteRule rebuild(std::string name, Pattern pattern, std::function<Expr(const Call&, const MatchMap&)> build);

// `x` when it can stand in for `call`: it has the call's type and device.
Expr as_replacement(const Call& call, const Expr& x);
// Whether every call `match` spells out (not one a wildcard stands for) runs
// on `call`'s device: a rule that folds them must not move work across devices.
bool spelled_out_calls_on_device_of(const Call& call, const MatchMap& match);

class RuleSet {
 public:
  // Error(kUsage) for a rule without a name or pattern, or with both or
  // neither of result and build.
  explicit RuleSet(std::vector<RewriteRule> rules);

  const std::vector<RewriteRule>& rules() const { return rules_; }

  // `e` with every typed operator call, children first, replaced by the
  // first rule that matches it and gives a replacement. The new nodes take
  // the replaced call's device and span (ExprMutator). `applied`, when
  // given, receives the names of the rules that fired, in order.
  Expr apply(const Expr& e, std::vector<std::string>* applied = nullptr) const;

  // The indices of the rules that can match a call of `op_name`, in order.
  const std::vector<size_t>& candidates(const std::string& op_name) const;

 private:
  std::vector<RewriteRule> rules_;
  // Per operator, the rules that can match a call of it, in rule order.
  std::unordered_map<std::string, std::vector<size_t>> by_op_;
  std::vector<size_t> any_op_;  // rules whose pattern names no one operator
};

}  // namespace switchyard
