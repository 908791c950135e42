// FoldConstant: operator calls on constants become constants, evaluated by
// the reference interpreter, placed where the folded expression was.
#include "transform/fold_constant.h"

#include <unordered_set>

#include "interp/evaluate.h"
#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

// The largest constant folding makes that is larger than the constants it
// reads (FoldConstant.max_bytes raises it).
constexpr int64_t kDefaultMaxFoldedBytes = int64_t(64) << 20;

class ConstantFolder : public ExprMutator {
 public:
  explicit ConstantFolder(int64_t max_bytes) : max_bytes_(max_bytes) {}

  Expr visit_tuple(const Tuple& original) override {
    Tuple tuple = downcast<TupleNode>(ExprMutator::visit_tuple(original));
    bool all_constant = true;
    for (const Expr& f : tuple->fields) all_constant = all_constant && is_constant_value(f);
    if (all_constant) constant_tuples_.insert(tuple.get());
    return tuple;
  }

  Expr visit_tuple_get_item(const TupleGetItem& original) override {
    TupleGetItem item = downcast<TupleGetItemNode>(ExprMutator::visit_tuple_get_item(original));
    const TupleNode* tuple = as<TupleNode>(item->tuple);
    if (!tuple || item->index < 0 || size_t(item->index) >= tuple->fields.size()) return item;
    const Constant field = downcast<ConstantNode>(tuple->fields[size_t(item->index)]);
    if (!field) return item;
    return placed_constant(field->data, item, {item->span(), field->span()});
  }

  Expr visit_call(const Call& original) override {
    Call call = downcast<CallNode>(ExprMutator::visit_call(original));
    const OpNode* op = as<OpNode>(call->op);
    if (!op || op == on_device_op()) return call;
    if (op == device_copy_op()) return fold_copy(call);
    std::vector<Span> spans{call->span()};
    for (const Expr& a : call->args) {
      if (!is_constant_value(a)) return call;
      collect_spans(a, &spans);
    }
    if (amplifies(*call)) return call;  // left a kernel, which computes it at run time
    Value value;
    try {
      value = evaluate_expr(call);
    } catch (const Error&) {
      return call;  // e.g. an integer division by zero: left to fail at run time
    }
    return value_to_expr(value, call, Span::fused(spans));
  }

 private:
  // Whether folding `call` would make a constant over the limit that is
  // larger than the constants it reads together (each counted once): a
  // 55-byte broadcast_to(1f, shape=[25000, 20000]) made a 2 GB weights.bin.
  // A large result of large inputs (a transposed weight) still folds.
  bool amplifies(const CallNode& call) const {
    int64_t result = type_nbytes(call.checked_type());
    if (result <= max_bytes_) return false;
    std::unordered_set<const ConstantNode*> read;
    int64_t inputs = 0;
    std::vector<const ExprNode*> work;
    for (const Expr& a : call.args) work.push_back(a.get());
    while (!work.empty()) {
      const ExprNode* n = work.back();
      work.pop_back();
      if (n->kind() == ExprKind::kTuple)
        for (const Expr& f : static_cast<const TupleNode*>(n)->fields) work.push_back(f.get());
      else if (n->kind() == ExprKind::kConstant && read.insert(static_cast<const ConstantNode*>(n)).second)
        inputs += int64_t(static_cast<const ConstantNode*>(n)->data.nbytes());
    }
    return result > inputs;
  }

  bool is_constant_value(const Expr& e) const {
    return is<ConstantNode>(e) || constant_tuples_.count(e.get()) > 0;
  }

  // The spans of a constant argument: its own, and its fields' for a tuple.
  void collect_spans(const Expr& e, std::vector<Span>* spans) const {
    std::vector<const ExprNode*> work{e.get()};
    while (!work.empty()) {
      const ExprNode* n = work.back();
      work.pop_back();
      spans->push_back(n->span());
      if (n->kind() == ExprKind::kTuple)
        for (const Expr& f : static_cast<const TupleNode*>(n)->fields) work.push_back(f.get());
    }
  }

  // A copy of a constant is the constant on the copy's destination. Before
  // planning the copy's device is not yet resolved, so the copy stays.
  Expr fold_copy(const Call& call) {
    const ConstantNode* source = as<ConstantNode>(call->args[0]);
    if (!source || !call->virtual_device()->is_fully_constrained()) return call;
    return placed_constant(source->data, call, {call->span(), source->span()});
  }

  Constant placed_constant(const NDArray& data, const Expr& replaced, const std::vector<Span>& spans) {
    Type type = replaced->checked_type() ? replaced->checked_type() : Type(tensor_type(data.shape(), data.dtype()));
    return make_constant(data, {.virtual_device = replaced->virtual_device(), .span = Span::fused(spans),
                                .checked_type = type});
  }

  // The interpreter's value as constants on `call`'s device; a tuple (from
  // split or nn.batch_norm) becomes a tuple of constants.
  Expr value_to_expr(const Value& value, const Call& call, const Span& span) {
    NodeMeta meta{.virtual_device = call->virtual_device(), .span = span, .checked_type = call->checked_type()};
    if (value.is_tensor()) return make_constant(value.tensor, meta);
    if (!value.is_tuple()) return call;
    const TupleTypeNode* type = as_tuple(call->checked_type());
    std::vector<Expr> fields;
    for (size_t i = 0; i < value.fields.size(); ++i) {
      const Value& field = value.fields[i];
      if (!field.is_tensor()) return call;
      fields.push_back(make_constant(field.tensor, {.virtual_device = call->virtual_device(), .span = span,
                                                    .checked_type = type ? type->fields[i] : Type()}));
    }
    Tuple tuple = make_tuple(std::move(fields), meta);
    constant_tuples_.insert(tuple.get());
    return tuple;
  }

  int64_t max_bytes_;
  std::unordered_set<const ExprNode*> constant_tuples_;
};

}  // namespace

Pass FoldConstant() {
  return make_module_pass({"FoldConstant", 2, {"InferType"}}, [](const IRModule& mod, const PassContext& ctx) {
    int64_t max_bytes = ctx.config_int("FoldConstant.max_bytes", kDefaultMaxFoldedBytes);
    return map_functions(mod, [max_bytes](const std::string&, const Function& fn) {
      ConstantFolder folder(max_bytes);
      return downcast<FunctionNode>(folder.mutate(fn));
    });
  });
}

}  // namespace switchyard
