// Structural equality, difference reports and hashing (see structural_equal.h).
// Both walk with explicit stacks; equality memoizes node pairs, hashing
// memoizes nodes, so shared sub-graphs cost once.
#include "ir/structural_equal.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace switchyard {

namespace {

enum class Edge : uint8_t { kOp, kArgs, kParams, kBody, kVar, kValue, kCond, kThen, kElse, kFields, kTuple };

const char* edge_name(Edge edge) {
  switch (edge) {
    case Edge::kOp: return "op";
    case Edge::kArgs: return "args";
    case Edge::kParams: return "params";
    case Edge::kBody: return "body";
    case Edge::kVar: return "var";
    case Edge::kValue: return "value";
    case Edge::kCond: return "cond";
    case Edge::kThen: return "then_branch";
    case Edge::kElse: return "else_branch";
    case Edge::kFields: return "fields";
    case Edge::kTuple: return "tuple";
  }
  return "?";
}

bool indexed(Edge edge) { return edge == Edge::kArgs || edge == Edge::kParams || edge == Edge::kFields; }

// A one-line description of a node for difference reports (ir/ cannot use
// the text printer).
std::string describe(const ExprNode* n) {
  std::string out = expr_kind_name(n->kind());
  switch (n->kind()) {
    case ExprKind::kVar: {
      auto* v = static_cast<const VarNode*>(n);
      out += " %" + v->name_hint;
      if (v->type_annotation) out += ": " + type_to_string(v->type_annotation);
      break;
    }
    case ExprKind::kConstant: {
      const NDArray& data = static_cast<const ConstantNode*>(n)->data;
      out += " " + type_to_string(tensor_type(data.shape(), data.dtype()));
      if (data.numel() == 1) out += " = " + std::to_string(data.get_as_double(0));
      break;
    }
    case ExprKind::kCall: {
      auto* call = static_cast<const CallNode*>(n);
      const ExprNode* op = call->op.get();
      if (op->kind() == ExprKind::kOp) out += " " + static_cast<const OpNode*>(op)->name;
      else if (op->kind() == ExprKind::kGlobalVar) out += " @" + static_cast<const GlobalVarNode*>(op)->name;
      else if (op->kind() == ExprKind::kVar) out += " %" + static_cast<const VarNode*>(op)->name_hint;
      out += " (" + std::to_string(call->args.size()) + " args)";
      break;
    }
    case ExprKind::kFunction:
      out += " (" + std::to_string(static_cast<const FunctionNode*>(n)->params.size()) + " params)";
      break;
    case ExprKind::kLet: out += " %" + static_cast<const LetNode*>(n)->var->name_hint; break;
    case ExprKind::kTuple:
      out += " (" + std::to_string(static_cast<const TupleNode*>(n)->fields.size()) + " fields)";
      break;
    case ExprKind::kTupleGetItem: out += " ." + std::to_string(static_cast<const TupleGetItemNode*>(n)->index); break;
    case ExprKind::kGlobalVar: out += " @" + static_cast<const GlobalVarNode*>(n)->name; break;
    case ExprKind::kOp: out += " " + static_cast<const OpNode*>(n)->name; break;
    default: break;
  }
  if (!n->virtual_device()->is_fully_unconstrained()) out += " @" + n->virtual_device()->str();
  if (n->span().defined()) out += " at " + n->span().to_string();
  return out;
}

struct PairHash {
  size_t operator()(const std::pair<const ExprNode*, const ExprNode*>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
  }
};

class EqualityChecker {
 public:
  EqualityChecker(const StructuralEqualOptions& options, bool want_report)
      : options_(options), want_report_(want_report) {}

  // Whether `lhs` equals `rhs`; on a difference with want_report, report()
  // describes it under the path root `root`.
  bool run(const Expr& lhs, const Expr& rhs, const std::string& root) {
    root_ = root;
    steps_.clear();
    stack_.clear();
    push(lhs.get(), rhs.get(), -1, Edge::kBody, 0, false);
    while (!stack_.empty()) {
      Task task = stack_.back();
      stack_.pop_back();
      if (!compare(task)) return false;
    }
    return true;
  }

  const std::string& report() const { return report_; }
  // Records a difference found outside expressions (module shape).
  void set_report(std::string report) { report_ = std::move(report); }

 private:
  struct Task {
    const ExprNode* lhs;
    const ExprNode* rhs;
    int32_t path;  // index into steps_ (-1: root, or no report wanted)
    bool binding;  // a parameter or let variable at its binding site
  };
  struct Step {
    int32_t parent;
    Edge edge;
    int32_t index;
  };

  void push(const ExprNode* lhs, const ExprNode* rhs, int32_t parent, Edge edge, size_t index, bool binding) {
    int32_t path = -1;
    if (want_report_) {
      steps_.push_back({parent, edge, int32_t(index)});
      path = int32_t(steps_.size() - 1);
    }
    stack_.push_back({lhs, rhs, path, binding});
  }

  std::string path_text(int32_t path) const {
    std::vector<const Step*> chain;
    for (int32_t i = path; i >= 0; i = steps_[i].parent) chain.push_back(&steps_[i]);
    std::string out = root_;
    // chain.back() is the root step itself.
    size_t count = chain.size() > 0 ? chain.size() - 1 : 0;
    auto append = [&](const Step* s) {
      out += '.';
      out += edge_name(s->edge);
      if (indexed(s->edge)) out += "[" + std::to_string(s->index) + "]";
    };
    constexpr size_t kHead = 8, kTail = 12;
    for (size_t k = 0; k < count; ++k) {
      if (count > kHead + kTail && k == kHead) {
        out += ".(" + std::to_string(count - kHead - kTail) + " more)";
        k = count - kTail - 1;
        continue;
      }
      append(chain[count - 1 - k]);
    }
    return out;
  }

  bool differ(const Task& task, const std::string& what) {
    if (want_report_)
      report_ = path_text(task.path) + ": " + what + "\n  lhs: " + describe(task.lhs) + "\n  rhs: " + describe(task.rhs);
    return false;
  }

  // The fields a variable carries where it is bound.
  bool compare_var_fields(const Task& task) {
    auto* a = static_cast<const VarNode*>(task.lhs);
    auto* b = static_cast<const VarNode*>(task.rhs);
    if (!type_equal(a->type_annotation, b->type_annotation)) return differ(task, "variable types differ");
    if (options_.compare_devices && a->virtual_device() != b->virtual_device())
      return differ(task, "variable devices differ");
    if (options_.compare_spans && a->span() != b->span()) return differ(task, "variable spans differ");
    lhs_to_rhs_[a] = b;
    rhs_to_lhs_[b] = a;
    return true;
  }

  bool compare_var_use(const Task& task) {
    auto forward = lhs_to_rhs_.find(task.lhs);
    auto backward = rhs_to_lhs_.find(task.rhs);
    if (forward == lhs_to_rhs_.end() && backward == rhs_to_lhs_.end()) return compare_var_fields(task);  // free in both
    if (forward == lhs_to_rhs_.end() || forward->second != task.rhs || backward == rhs_to_lhs_.end() ||
        backward->second != task.lhs)
      return differ(task, "different variables");
    return true;
  }

  bool compare(const Task& task) {
    const ExprNode* a = task.lhs;
    const ExprNode* b = task.rhs;
    if (a->kind() != b->kind()) return differ(task, "node kinds differ");
    ExprKind kind = a->kind();
    if (kind == ExprKind::kVar) return task.binding ? compare_var_fields(task) : compare_var_use(task);
    // A pair of nodes each held by one parent is reached along one path only,
    // so only pairs with a shared side need remembering (chains stay cheap).
    bool shared = a->use_count() > 1 || b->use_count() > 1;
    if (shared && !seen_.insert({a, b}).second) return true;
    if (kind == ExprKind::kOp) return a == b || differ(task, "operators differ");
    if (options_.compare_spans && a->span() != b->span()) return differ(task, "spans differ");
    if (kind == ExprKind::kGlobalVar) {
      if (static_cast<const GlobalVarNode*>(a)->name != static_cast<const GlobalVarNode*>(b)->name)
        return differ(task, "global names differ");
      return true;
    }
    if (options_.compare_devices && a->virtual_device() != b->virtual_device()) return differ(task, "devices differ");
    int32_t path = task.path;
    switch (kind) {
      case ExprKind::kConstant:
        if (!static_cast<const ConstantNode*>(a)->data.bitwise_equal(static_cast<const ConstantNode*>(b)->data))
          return differ(task, "constant values differ");
        return true;
      case ExprKind::kCall: {
        auto* x = static_cast<const CallNode*>(a);
        auto* y = static_cast<const CallNode*>(b);
        if (x->args.size() != y->args.size())
          return differ(task, "argument counts differ (" + std::to_string(x->args.size()) + " vs " +
                                  std::to_string(y->args.size()) + ")");
        if (!attrs_equal(x->attrs, y->attrs)) return differ(task, "attributes differ");
        for (size_t i = x->args.size(); i-- > 0;) push(x->args[i].get(), y->args[i].get(), path, Edge::kArgs, i, false);
        push(x->op.get(), y->op.get(), path, Edge::kOp, 0, false);
        return true;
      }
      case ExprKind::kFunction: {
        auto* x = static_cast<const FunctionNode*>(a);
        auto* y = static_cast<const FunctionNode*>(b);
        if (x->params.size() != y->params.size())
          return differ(task, "parameter counts differ (" + std::to_string(x->params.size()) + " vs " +
                                  std::to_string(y->params.size()) + ")");
        if (!type_equal(x->ret_type, y->ret_type)) return differ(task, "return types differ");
        if (!attrs_equal(x->attrs, y->attrs)) return differ(task, "function attributes differ");
        push(x->body.get(), y->body.get(), path, Edge::kBody, 0, false);
        for (size_t i = x->params.size(); i-- > 0;)
          push(x->params[i].get(), y->params[i].get(), path, Edge::kParams, i, true);
        return true;
      }
      case ExprKind::kLet: {
        auto* x = static_cast<const LetNode*>(a);
        auto* y = static_cast<const LetNode*>(b);
        push(x->body.get(), y->body.get(), path, Edge::kBody, 0, false);
        push(x->value.get(), y->value.get(), path, Edge::kValue, 0, false);
        push(x->var.get(), y->var.get(), path, Edge::kVar, 0, true);
        return true;
      }
      case ExprKind::kIf: {
        auto* x = static_cast<const IfNode*>(a);
        auto* y = static_cast<const IfNode*>(b);
        push(x->else_branch.get(), y->else_branch.get(), path, Edge::kElse, 0, false);
        push(x->then_branch.get(), y->then_branch.get(), path, Edge::kThen, 0, false);
        push(x->cond.get(), y->cond.get(), path, Edge::kCond, 0, false);
        return true;
      }
      case ExprKind::kTuple: {
        auto* x = static_cast<const TupleNode*>(a);
        auto* y = static_cast<const TupleNode*>(b);
        if (x->fields.size() != y->fields.size())
          return differ(task, "tuple sizes differ (" + std::to_string(x->fields.size()) + " vs " +
                                  std::to_string(y->fields.size()) + ")");
        for (size_t i = x->fields.size(); i-- > 0;)
          push(x->fields[i].get(), y->fields[i].get(), path, Edge::kFields, i, false);
        return true;
      }
      case ExprKind::kTupleGetItem: {
        auto* x = static_cast<const TupleGetItemNode*>(a);
        auto* y = static_cast<const TupleGetItemNode*>(b);
        if (x->index != y->index) return differ(task, "tuple indices differ");
        push(x->tuple.get(), y->tuple.get(), path, Edge::kTuple, 0, false);
        return true;
      }
      default: return true;
    }
  }

  const StructuralEqualOptions& options_;
  bool want_report_;
  std::string root_;
  std::string report_;
  std::vector<Task> stack_;
  std::vector<Step> steps_;
  std::unordered_set<std::pair<const ExprNode*, const ExprNode*>, PairHash> seen_;
  std::unordered_map<const ExprNode*, const ExprNode*> lhs_to_rhs_, rhs_to_lhs_;
};

// Compares two modules; the report (when wanted) goes to `checker`.
bool modules_equal(const IRModule& lhs, const IRModule& rhs, EqualityChecker& checker) {
  const auto& a = lhs.functions();
  const auto& b = rhs.functions();
  if (a.size() != b.size()) {
    checker.set_report("module: " + std::to_string(a.size()) + " functions on the left, " + std::to_string(b.size()) +
                       " on the right");
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first) {
      checker.set_report("module: function " + std::to_string(i) + " is @" + a[i].first + " on the left, @" +
                         b[i].first + " on the right");
      return false;
    }
    if (!checker.run(a[i].second, b[i].second, "@" + a[i].first)) return false;
  }
  return true;
}

// --- hashing ---

size_t combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

class Hasher {
 public:
  explicit Hasher(const StructuralEqualOptions& options) : options_(options) {}

  size_t run(const Expr& root) {
    struct Frame {
      const ExprNode* node;
      bool expanded;
    };
    std::vector<Frame> stack{{root.get(), false}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (hashes_.count(top.node)) {
        stack.pop_back();
        continue;
      }
      if (!top.expanded) {
        top.expanded = true;
        const ExprNode* n = top.node;
        // Variables hash by where they are bound, never by identity.
        if (auto* fn = as<FunctionNode>(Expr(n)))
          for (size_t i = 0; i < fn->params.size(); ++i) roles_[fn->params[i].get()] = combine(1, i);
        if (auto* let = as<LetNode>(Expr(n))) roles_[let->var.get()] = 2;
        for_each_child(Expr(n), [&](const Expr& c) {
          if (!hashes_.count(c.get())) stack.push_back({c.get(), false});
        });
        continue;
      }
      const ExprNode* n = top.node;
      stack.pop_back();
      hashes_[n] = hash_node(n);
    }
    return hashes_.at(root.get());
  }

 private:
  size_t child(const Expr& e) const { return hashes_.at(e.get()); }

  size_t device_hash(const VirtualDevice* d) {
    if (!options_.compare_devices || d->is_fully_unconstrained()) return 0;
    auto [it, inserted] = device_hashes_.try_emplace(d, 0);
    if (inserted) it->second = std::hash<std::string>()(d->str());
    return it->second;
  }

  size_t span_hash(const Span& s) const {
    if (!options_.compare_spans) return 0;
    size_t h = 0;
    for (const Span& part : s.parts())
      h = combine(combine(combine(h, std::hash<std::string>()(part.source())), part.line()), part.column());
    return h;
  }

  size_t hash_node(const ExprNode* n) {
    size_t h = combine(size_t(n->kind()) + 1, span_hash(n->span()));
    if (n->kind() != ExprKind::kGlobalVar && n->kind() != ExprKind::kOp) h = combine(h, device_hash(n->virtual_device()));
    switch (n->kind()) {
      case ExprKind::kVar: {
        auto* v = static_cast<const VarNode*>(n);
        auto role = roles_.find(v);
        return combine(combine(h, role == roles_.end() ? 3 : role->second), type_hash(v->type_annotation));
      }
      case ExprKind::kConstant: {
        const NDArray& data = static_cast<const ConstantNode*>(n)->data;
        h = combine(combine(h, type_hash(tensor_type(data.shape(), data.dtype()))), data.nbytes());
        if (data.defined())
          h = combine(h, std::hash<std::string_view>()(
                             std::string_view(static_cast<const char*>(data.data()), data.nbytes())));
        return h;
      }
      case ExprKind::kCall: {
        auto* call = static_cast<const CallNode*>(n);
        h = combine(combine(h, child(call->op)), attrs_hash(call->attrs));
        for (const Expr& a : call->args) h = combine(h, child(a));
        return h;
      }
      case ExprKind::kFunction: {
        auto* fn = static_cast<const FunctionNode*>(n);
        h = combine(combine(h, type_hash(fn->ret_type)), fn->attrs ? attrs_hash(fn->attrs) : attrs_hash(Attrs()));
        for (const Var& p : fn->params) h = combine(h, child(p));
        return combine(h, child(fn->body));
      }
      case ExprKind::kLet: {
        auto* let = static_cast<const LetNode*>(n);
        return combine(combine(combine(h, child(let->var)), child(let->value)), child(let->body));
      }
      case ExprKind::kIf: {
        auto* branch = static_cast<const IfNode*>(n);
        return combine(combine(combine(h, child(branch->cond)), child(branch->then_branch)), child(branch->else_branch));
      }
      case ExprKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(n)->fields) h = combine(h, child(f));
        return combine(h, static_cast<const TupleNode*>(n)->fields.size());
      case ExprKind::kTupleGetItem: {
        auto* item = static_cast<const TupleGetItemNode*>(n);
        return combine(combine(h, child(item->tuple)), size_t(item->index));
      }
      case ExprKind::kGlobalVar: return combine(h, std::hash<std::string>()(static_cast<const GlobalVarNode*>(n)->name));
      case ExprKind::kOp: return combine(h, std::hash<std::string>()(static_cast<const OpNode*>(n)->name));
    }
    return h;
  }

  const StructuralEqualOptions& options_;
  std::unordered_map<const ExprNode*, size_t> hashes_;
  std::unordered_map<const ExprNode*, size_t> roles_;
  std::unordered_map<const VirtualDevice*, size_t> device_hashes_;
};

}  // namespace

bool structural_equal(const Expr& lhs, const Expr& rhs, const StructuralEqualOptions& options) {
  return EqualityChecker(options, false).run(lhs, rhs, "expr");
}

bool structural_equal(const IRModule& lhs, const IRModule& rhs, const StructuralEqualOptions& options) {
  EqualityChecker checker(options, false);
  return modules_equal(lhs, rhs, checker);
}

std::optional<std::string> structural_diff(const Expr& lhs, const Expr& rhs, const StructuralEqualOptions& options) {
  EqualityChecker checker(options, true);
  if (checker.run(lhs, rhs, "expr")) return std::nullopt;
  return checker.report();
}

std::optional<std::string> structural_diff(const IRModule& lhs, const IRModule& rhs,
                                           const StructuralEqualOptions& options) {
  EqualityChecker checker(options, true);
  if (modules_equal(lhs, rhs, checker)) return std::nullopt;
  return checker.report();
}

size_t structural_hash(const Expr& expr, const StructuralEqualOptions& options) {
  return Hasher(options).run(expr);
}

}  // namespace switchyard
