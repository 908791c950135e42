// Fused kernels must keep their Primitive attribute: the backend compiles
// only primitive functions, so a pass that rebuilds one without it (a TVM
// habit: `Function(f.params, body)`) would fail the build far from its cause.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/violation.h"
#include "ir/module.h"

namespace switchyard {

class PrimitiveTracker {
 public:
  // The first function literal called as a kernel that is not primitive
  // although a primitive function stood there in a module remembered before
  // (same body, or same span: rebuilt functions keep theirs), or nullopt.
  std::optional<Violation> find_lost(const IRModule& mod) const;
  // Remembers the primitive functions called in `mod`.
  void remember(const IRModule& mod);

 private:
  std::vector<Expr> bodies_;  // keeps the remembered bodies alive
  std::unordered_set<const ExprNode*> body_nodes_;
  std::unordered_set<std::string> spans_;
};

}  // namespace switchyard
