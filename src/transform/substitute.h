// Substitution of variables, for passes that move code between scopes
// (inlining a function body, removing let bindings).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

// An expression with some of its free variables as holes, instantiated any
// number of times with expressions for the holes. Built once in time linear
// in the expression; each instantiation is linear in it too and needs no hash
// tables, so inlining one small function at a million call sites is cheap.
// Nodes that depend on no hole and no bound variable are shared by every
// instance; rebuilt nodes keep their device, span and type.
class SubstitutionTemplate {
 public:
  // With `fresh_bindings`, each variable bound inside `expr` (let variables,
  // parameters of function literals) becomes a new variable (same name,
  // device, span and type) in every instance, so that a body copied twice
  // into one function binds each variable once.
  SubstitutionTemplate(const Expr& expr, const std::vector<Var>& holes, bool fresh_bindings);
  // `values[i]` in place of hole i; the values are used as they are.
  Expr instantiate(const std::vector<Expr>& values) const;

 private:
  struct Entry {
    const ExprNode* node;
    std::vector<uint32_t> children;  // entry indices, in for_each_child order
    int hole = -1;                   // index into the holes, for a hole variable
    bool fresh = false;              // a bound variable renamed in each instance
    bool varies = false;             // differs between instances
  };
  std::vector<Entry> entries_;  // post-order: children first, the root last
};

using VarMap = std::unordered_map<const VarNode*, Expr>;

// `expr` with every use of a variable in `replacements` replaced by its
// expression (see SubstitutionTemplate). Linear, iterative.
Expr substitute(const Expr& expr, const VarMap& replacements, bool fresh_bindings = false);

}  // namespace switchyard
