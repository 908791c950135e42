// Lowers a tree of element-wise, broadcast and injective operator calls,
// evaluated at one element index, to kernel IR: one let per operator (reused
// when the same node is needed at the same element), loads straight from
// the parameters' buffers, and an if/else chain per concatenate, so a fused
// chain needs no intermediate tensors.
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/element_index.h"
#include "kernel_ir/stmt.h"

namespace switchyard {

class ElementLowering {
 public:
  // Statements are appended to `out`; `counter` numbers locals across one kernel.
  ElementLowering(std::vector<kernel_ir::Stmt>& out, int& counter);

  // Elements of `node` are loaded from buffer `name` (of the node's dtype).
  void bind_buffer(const ExprNode* node, std::string name);
  // The same for a buffer a parallel loop takes as an argument: its loads'
  // locals are named after `name`, not the node, so loops reading different
  // nodes this way can be equal.
  void bind_argument_buffer(const ExprNode* node, std::string name) {
    bind_buffer(node, std::move(name));
    argument_buffers_.insert(node);
  }
  // `node`'s value at `index` is `value` (a reduction's or anchor's result
  // in its epilogue); reading it at another index is an error.
  void bind_value(const ExprNode* node, const IndexAt& index, kernel_ir::Expr value);

  // Where a concatenation's part starts: along its axis (`begin`) and, as
  // the part is one contiguous run of the result, at which offset (`base`).
  // Null: at the constant the operand shapes give.
  // `offset`, when set, is the part's own element (its layout may differ
  // from the result's) and overrides `base`.
  struct PartStart {
    kernel_ir::Expr begin, base, offset;
  };
  // Every element this lowering computes lies in part `part` of the
  // concatenation `concatenate` (which then reads that part alone, with no
  // test of the coordinate along its axis), starting at `start`.
  void within_concatenation_part(const CallNode* concatenate, size_t part, PartStart start = {}) {
    known_parts_[concatenate] = {part, std::move(start)};
  }

  // Appends what computing `node` at `index` needs and returns its value (in
  // the node's compute type). Iterative: no native recursion on depth.
  kernel_ir::Expr lower(const Expr& node, const IndexAt& index);

  // Whether some index needed division to recover coordinates.
  bool divided() const { return divided_; }
  bool* division_tracker() { return &divided_; }
  // A fresh local name from an IR name ("nn.relu" -> "relu_7").
  std::string fresh(const std::string& base);

 private:
  struct Key {
    const ExprNode* node;
    IndexAt index;
    bool operator==(const Key& other) const { return node == other.node && index == other.index; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<const void*>()(k.node) ^ k.index.hash(); }
  };

  void schedule(const Expr& node, const IndexAt& index);
  void evaluate(const Expr& node, const IndexAt& index);
  void evaluate_call(const CallNode* call, const IndexAt& index, const Key& key);
  void evaluate_concatenate(const CallNode* call, const IndexAt& index, const Key& key);
  void evaluate_concatenation_part(const CallNode* call, size_t axis, size_t part, const PartStart& start,
                                   const IndexAt& index, const Key& key);
  void evaluate_take(const CallNode* call, const IndexAt& index, const Key& key);
  void combine(const CallNode* call, const Key& key, size_t arity);
  kernel_ir::Expr pop();
  const kernel_ir::Expr* lookup(const Key& key) const;
  void remember(const Key& key, const kernel_ir::Expr& value);
  // The block statements go to: the innermost open concatenate branch.
  std::vector<kernel_ir::Stmt>& block() { return branches_.empty() ? out_ : branches_.back(); }

  std::vector<kernel_ir::Stmt>& out_;
  int& counter_;
  bool divided_ = false;
  std::unordered_map<const ExprNode*, std::string> buffers_;
  std::unordered_set<const ExprNode*> bound_;  // nodes with a value at one index only
  std::unordered_set<const ExprNode*> argument_buffers_;  // see bind_argument_buffer
  std::unordered_map<const CallNode*, std::pair<size_t, PartStart>> known_parts_;  // see within_concatenation_part
  // Values computed so far, one map per open block (concatenate's branches).
  std::vector<std::unordered_map<Key, kernel_ir::Expr, KeyHash>> scopes_;
  // Statements of the concatenate branches open now, innermost last.
  std::vector<std::vector<kernel_ir::Stmt>> branches_;
  std::vector<std::function<void()>> work_;
  std::vector<kernel_ir::Expr> results_;
};

}  // namespace switchyard
