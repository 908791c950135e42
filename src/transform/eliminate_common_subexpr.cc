// EliminateCommonSubexpr: hash-consing of calls and tuple projections, keyed
// by callee, attributes, argument nodes and virtual device.
#include "transform/eliminate_common_subexpr.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/functor.h"

namespace switchyard {

namespace {

size_t combine(size_t seed, size_t value) { return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

class CommonSubexprEliminator : public ExprMutator {
 public:
  // `in_kernel`: nodes inside primitive (fused) functions, which are never
  // merged; null when the function holds none.
  explicit CommonSubexprEliminator(const std::unordered_set<const ExprNode*>* in_kernel) : in_kernel_(in_kernel) {}

  bool saw_kernel() const { return saw_kernel_; }

  Expr visit_function(const Function& original) override {
    saw_kernel_ = saw_kernel_ || original->is_primitive();
    return ExprMutator::visit_function(original);
  }

  Expr visit_call(const Call& original) override {
    Call call = downcast<CallNode>(ExprMutator::visit_call(original));
    if (in_kernel_ && in_kernel_->count(original.get())) return call;
    size_t hash = combine(std::hash<const void*>()(call->op.get()), attrs_hash(call->attrs));
    hash = combine(hash, std::hash<const void*>()(call->virtual_device()));
    for (const Expr& a : call->args) hash = combine(hash, std::hash<const void*>()(a.get()));
    std::vector<Expr>& bucket = calls_[hash];
    for (const Expr& seen : bucket)
      if (same_call(*static_cast<const CallNode*>(seen.get()), *call)) return seen;
    bucket.push_back(call);
    return call;
  }

  Expr visit_tuple_get_item(const TupleGetItem& original) override {
    TupleGetItem item = downcast<TupleGetItemNode>(ExprMutator::visit_tuple_get_item(original));
    if (in_kernel_ && in_kernel_->count(original.get())) return item;
    size_t hash = combine(std::hash<const void*>()(item->tuple.get()), size_t(item->index));
    hash = combine(hash, std::hash<const void*>()(item->virtual_device()));
    std::vector<Expr>& bucket = items_[hash];
    for (const Expr& seen : bucket) {
      const auto* s = static_cast<const TupleGetItemNode*>(seen.get());
      if (s->tuple.same_as(item->tuple) && s->index == item->index && s->virtual_device() == item->virtual_device() &&
          same_type(s->checked_type(), item->checked_type()))
        return seen;
    }
    bucket.push_back(item);
    return item;
  }

 private:
  static bool same_type(const Type& a, const Type& b) { return a.same_as(b) || (a && b && type_equal(a, b)); }

  static bool same_call(const CallNode& a, const CallNode& b) {
    if (!a.op.same_as(b.op) || a.virtual_device() != b.virtual_device() || a.args.size() != b.args.size()) return false;
    for (size_t i = 0; i < a.args.size(); ++i)
      if (!a.args[i].same_as(b.args[i])) return false;
    return attrs_equal(a.attrs, b.attrs) && same_type(a.checked_type(), b.checked_type());
  }

  const std::unordered_set<const ExprNode*>* in_kernel_;
  bool saw_kernel_ = false;
  std::unordered_map<size_t, std::vector<Expr>> calls_;
  std::unordered_map<size_t, std::vector<Expr>> items_;
};

// Nodes inside fused kernels belong to their kernel; merging one with a node
// outside would reach across the kernel boundary. Kernels are rare before
// FuseOps, so they are looked for only once the first run has met one.
Function eliminate(const Function& fn) {
  CommonSubexprEliminator first(nullptr);
  Expr out = first.mutate(fn);
  if (!first.saw_kernel()) return downcast<FunctionNode>(out);
  std::unordered_set<const ExprNode*> in_kernel;
  post_order_visit(fn, [&](const Expr& e) {
    const FunctionNode* f = as<FunctionNode>(e);
    if (f && f->is_primitive()) post_order_visit(f->body, [&](const Expr& inner) { in_kernel.insert(inner.get()); });
  });
  CommonSubexprEliminator second(&in_kernel);
  return downcast<FunctionNode>(second.mutate(fn));
}

}  // namespace

Pass EliminateCommonSubexpr() {
  return make_module_pass({"EliminateCommonSubexpr", 2, {"InferType"}}, [](const IRModule& mod, const PassContext&) {
    return map_functions(mod, [](const std::string&, const Function& fn) { return eliminate(fn); });
  });
}

}  // namespace switchyard
