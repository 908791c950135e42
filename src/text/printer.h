// The text IR printer: modules and expressions in the canonical form that
// parse_module (text/parser.h) reads back structurally equal.
//
// Canonical form (docs/text-format.md): every non-atomic node that is not a
// block's final expression or a let's value gets a numbered binding
// `%N = expr @dev;` in the innermost block that encloses all its uses; devices
// follow what they place; attributes equal to the operator's default are
// left out. Printing is iterative and linear in the number of nodes.
#pragma once

#include <string>

#include "ir/module.h"

namespace switchyard {

struct PrintOptions {
  // kAll: every constrained device; kChanged: a binding's device only where it
  // differs from the previous binding's in the same block (parameters and
  // results always); kNone: no devices (for reading; does not round-trip).
  enum class Devices { kAll, kChanged, kNone } devices = Devices::kAll;
  // false: constants over kMaxInlineElements elements are written as
  // meta[Constant][i] with their type, after a comment saying the text does
  // not parse back (text/elided_constants.h). For reading large models;
  // whatever is parsed again needs the weights.
  bool show_weights = true;
};

std::string print_module(const IRModule& module, const PrintOptions& options = {});
std::string print_expr(const Expr& expr, const PrintOptions& options = {});

}  // namespace switchyard
