// Placement rules given at build time: `op:nn.softmax=cpu:1` places every call
// of an operator, `node:encoder/layer.3/*=cuda:0` every call whose span (an
// imported model's node name, or file:line:column) matches a glob. Applied
// before planning by setting the matching calls' devices, which planning then
// treats as hard facts.
#pragma once

#include <string>
#include <vector>

#include "ir/compilation_config.h"
#include "ir/module.h"

namespace switchyard {

struct PlacementRule {
  enum class Kind { kOperator, kNode } kind;
  std::string pattern;  // operator name, or a glob on span text
  const VirtualDevice* device;
  std::string text;     // as written, for messages
};

// The parts of a build-time rule "KIND:PATTERN=VALUE", the pattern's quotes
// removed; Error(kUsage) "malformed <what> '<text>': ... (expected
// <expected>)" when a part is missing or the pattern is empty.
struct RuleParts {
  std::string kind, pattern, value;
};
RuleParts split_rule(const std::string& text, const std::string& what, const std::string& expected);

// Parses "op:NAME=DEVICE" or "node:GLOB=DEVICE"; Error(kUsage) on a malformed
// rule, an unknown operator or a device missing from `config`.
PlacementRule parse_placement_rule(const std::string& text, const CompilationConfig& config);

// Whether a part of `span` (its source, an imported node's name, or its
// "file:line:column") matches the glob.
bool span_matches(const Span& span, const std::string& glob);

// The rule that decides a call of `op_name` at `span`: the last one that
// matches, as when rules are applied; null when none does.
const PlacementRule* matching_rule(const std::vector<PlacementRule>& rules, const std::string& op_name,
                                   const Span& span);

struct RuleApplication {
  IRModule module;
  std::vector<int> matches;  // calls matched per rule (0 deserves a warning)
};

// Applies rules in order (a later rule wins over an earlier one on the same
// call); a call that already states another device is an Error(kPlacement).
RuleApplication apply_placement_rules(const IRModule& mod, const std::vector<PlacementRule>& rules);

}  // namespace switchyard
