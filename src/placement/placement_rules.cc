// Parsing and application of --place rules.
#include "placement/placement_rules.h"

#include <fnmatch.h>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

RuleParts split_rule(const std::string& text, const std::string& what, const std::string& expected) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, "malformed " + what + " '" + text + "': " + why + " (expected " + expected + ")");
  };
  size_t colon = text.find(':');
  size_t eq = text.rfind('=');
  if (colon == std::string::npos || eq == std::string::npos || eq < colon) throw bad("missing ':' or '='");
  RuleParts parts{text.substr(0, colon), text.substr(colon + 1, eq - colon - 1), text.substr(eq + 1)};
  std::string& pattern = parts.pattern;
  if (pattern.size() >= 2 && (pattern.front() == '\'' || pattern.front() == '"') && pattern.back() == pattern.front())
    pattern = pattern.substr(1, pattern.size() - 2);
  if (pattern.empty()) throw bad("empty pattern");
  return parts;
}

PlacementRule parse_placement_rule(const std::string& text, const CompilationConfig& config) {
  const std::string expected = "op:NAME=DEVICE or node:PATTERN=DEVICE";
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, "malformed placement rule '" + text + "': " + why + " (expected " + expected + ")");
  };
  auto [kind, pattern, device] = split_rule(text, "placement rule", expected);
  PlacementRule rule;
  rule.text = text;
  rule.pattern = pattern;
  if (kind == "op") {
    rule.kind = PlacementRule::Kind::kOperator;
    if (!find_op_def(pattern)) throw bad("unknown operator '" + pattern + "'");
  } else if (kind == "node") {
    rule.kind = PlacementRule::Kind::kNode;
  } else {
    throw bad("unknown rule kind '" + kind + "'");
  }
  const VirtualDevice* wish;
  try {
    wish = VirtualDevice::parse(device);
  } catch (const Error& e) {
    throw bad(e.message());
  }
  rule.device = config.resolve(wish);
  if (!rule.device) throw bad("device " + device + " is not among the build's devices (" + config.to_string() + ")");
  return rule;
}

bool span_matches(const Span& span, const std::string& glob) {
  for (const Span& part : span.parts()) {
    if (fnmatch(glob.c_str(), part.source().c_str(), 0) == 0) return true;
    if (fnmatch(glob.c_str(), part.to_string().c_str(), 0) == 0) return true;
  }
  return false;
}

namespace {

bool rule_matches(const PlacementRule& r, const std::string& op_name, const Span& span) {
  return r.kind == PlacementRule::Kind::kOperator ? op_name == r.pattern : span_matches(span, r.pattern);
}

class RuleApplier : public ExprMutator {
 public:
  RuleApplier(const std::vector<PlacementRule>& rules, std::vector<int>* matches) : rules_(rules), matches_(matches) {}

  Expr visit_call(const Call& c) override {
    Expr base = ExprMutator::visit_call(c);
    const OpNode* op = as<OpNode>(c->op);
    if (!op || is_placement_op(op)) return base;
    for (size_t i = 0; i < rules_.size(); ++i)
      if (rule_matches(rules_[i], op->name, c->span())) (*matches_)[i]++;
    const PlacementRule* chosen = matching_rule(rules_, op->name, c->span());
    if (!chosen) return base;
    const VirtualDevice* stated = c->virtual_device();
    if (!stated->is_fully_unconstrained() && !VirtualDevice::join(stated, chosen->device))
      throw Error(ErrorKind::kPlacement,
                  "placement rule '" + chosen->text + "' puts '" + op->name + "' on " + chosen->device->device_name() +
                      ", but the call already states device " + stated->str(),
                  c->span());
    return with_fields(downcast<CallNode>(base), {.virtual_device = chosen->device});
  }

 private:
  const std::vector<PlacementRule>& rules_;
  std::vector<int>* matches_;
};

}  // namespace

const PlacementRule* matching_rule(const std::vector<PlacementRule>& rules, const std::string& op_name,
                                   const Span& span) {
  const PlacementRule* chosen = nullptr;
  for (const PlacementRule& r : rules)
    if (rule_matches(r, op_name, span)) chosen = &r;
  return chosen;
}

RuleApplication apply_placement_rules(const IRModule& mod, const std::vector<PlacementRule>& rules) {
  RuleApplication out;
  out.matches.assign(rules.size(), 0);
  if (rules.empty()) {
    out.module = mod;
    return out;
  }
  RuleApplier applier(rules, &out.matches);
  out.module = applier.mutate_module(mod);
  return out;
}

}  // namespace switchyard
