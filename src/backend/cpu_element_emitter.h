// Inlines a tree of element-wise, broadcast and injective operator calls
// into the body of one generated loop: evaluating a node at an element index
// emits one `const` local per operator (reused when the same node is needed
// at the same element) and reads parameters straight from their buffers, so
// a fused chain needs no intermediate tensors.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/cpu_code.h"
#include "backend/cpu_index.h"

namespace switchyard {

class ElementEmitter {
 public:
  // Statements go to `out`; `counter` numbers locals across one kernel.
  ElementEmitter(CodeWriter& out, std::set<CpuHelper>& helpers, int& counter);

  // Elements of `node` are read from `pointer` (of the node's storage type).
  void bind_buffer(const ExprNode* node, std::string pointer);
  // `node`'s compute-typed value at `index` is `value` (an anchor's result
  // inside its epilogue loop); it may be read at that index only.
  void bind_value(const ExprNode* node, const ElementIndex& index, std::string value);

  // Emits what computing `node` at `index` needs and returns the C++
  // expression of the value (in the node's compute type). Iterative.
  std::string emit(const Expr& node, const ElementIndex& index);

  // Whether some index needed division to recover coordinates.
  const IndexCost& cost() const { return cost_; }
  IndexCost* cost_tracker() { return &cost_; }
  // A fresh local name from an IR name ("nn.relu" -> "relu_7").
  std::string fresh(const std::string& base);

 private:
  void schedule(const Expr& node, const ElementIndex& index);
  void evaluate(const Expr& node, const ElementIndex& index);
  void evaluate_call(const CallNode* call, const ElementIndex& index, const std::string& key);
  void evaluate_concatenate(const CallNode* call, const ElementIndex& index, const std::string& key);
  void evaluate_take(const CallNode* call, const ElementIndex& index, const std::string& key);
  // Pops the argument values of `call` and emits its local.
  void combine(const CallNode* call, const std::string& key, size_t arity);
  std::string pop();
  const std::string* lookup(const std::string& key) const;
  void remember(const std::string& key, const std::string& value);

  CodeWriter& out_;
  std::set<CpuHelper>& helpers_;
  int& counter_;
  IndexCost cost_;
  std::unordered_map<const ExprNode*, std::string> buffers_;
  std::unordered_map<std::string, std::string> bound_values_;  // by node and index key
  std::unordered_set<const ExprNode*> bound_nodes_;
  // Values computed so far, one map per open block (concatenate's branches).
  std::vector<std::unordered_map<std::string, std::string>> scopes_;
  std::vector<std::function<void()>> work_;
  std::vector<std::string> results_;
};

// The literal of a 0-d constant in its compute type.
std::string constant_literal(const ConstantNode& constant);

}  // namespace switchyard
