// A mutator that knows how many nodes read each node of the body it was
// made for, and the module pass that runs one over every function.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/functor.h"
#include "transform/pass.h"

namespace switchyard {

// Rewrites that replace a chain of calls must know each intermediate is read
// by the next step alone (else the chain's value would be computed twice).
class ReadCountingMutator : public ExprMutator {
 public:
  explicit ReadCountingMutator(const Expr& body) {
    post_order_visit(body, [&](const Expr& e) {
      for_each_child(e, [&](const Expr& child) { ++readers_[child.get()]; });
    });
  }

 protected:
  // Whether exactly one node of the original body reads `e`.
  bool read_once(const Expr& e) const {
    auto it = readers_.find(e.get());
    return it != readers_.end() && it->second == 1;
  }

 private:
  std::unordered_map<const ExprNode*, int> readers_;
};

// A module pass `name` (opt level 1, after InferType) that runs a fresh
// Mutator, made from each function's body, over that function.
template <typename Mutator>
Pass function_mutator_pass(const std::string& name) {
  return make_module_pass({name, 1, {"InferType"}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) {
      Mutator mutator(fn->body);
      return downcast<FunctionNode>(mutator.mutate(fn));
    });
  });
}

}  // namespace switchyard
