// Rewriting with patterns, as TVM's rewrite(DFPatternCallback, expr): each
// callback's pattern is tried on every node, children first, and a match is
// replaced by what the callback returns.
//
// The walk is an ExprMutator, so a replacement (and every node newly built
// inside it that states no device or span) takes the replaced node's device
// and span, and nodes around it are rebuilt through with_fields: a callback
// needs no device or span code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "transform/pattern.h"

namespace switchyard {

struct RewriteCallback {
  Pattern pattern;
  // The replacement of `post`, the matched node rebuilt with its children
  // already rewritten (`pre` is the node before that). `node_map` says what
  // each pattern node matched within `post`. Returning `post` or null keeps it.
  std::function<Expr(const Expr& pre, const Expr& post, const MatchMap& node_map)> rewrite;
  bool require_type = false;  // types are inferred before each sweep of this callback
  bool rewrite_once = false;  // this callback sweeps once, not until nothing changes
  std::string name;           // how errors name it (a Python callback's class); may be empty
};

// Sweeps the callbacks in order, each over the whole expression, and repeats
// until a round changes nothing. Variables, global references and operators
// are matched only as operands: a callback replaces the node that uses them.
// `mod` resolves global functions when types are inferred. Throws
// Error(kUsage) naming the callbacks and their patterns when 100 rounds still
// change the expression, or as soon as the callbacks have made more
// replacements than 100 rounds over the input's nodes would: a replacement
// its own pattern matches again can double the expression each round, and
// then the hundredth round never comes.
Expr rewrite(const std::vector<RewriteCallback>& callbacks, const Expr& e, const IRModule* mod = nullptr);

// Rewrites every function of `mod` but fused (primitive) ones.
IRModule rewrite(const std::vector<RewriteCallback>& callbacks, const IRModule& mod);

}  // namespace switchyard
