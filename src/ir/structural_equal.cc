// Structural equality and difference reports (see structural_equal.h), from
// each kind's field table. Walks with an explicit stack and memoizes shared
// node pairs, so shared sub-graphs cost once.
#include "ir/structural_equal.h"

#include <algorithm>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace switchyard {

namespace {

// What reports call a difference in a value field, or in the length of a
// child list; fields not listed read "<Kind> <field> differ".
struct Difference {
  ExprKind kind;
  std::string_view field;
  const char* phrase;
};
constexpr Difference kDifferences[] = {
    {ExprKind::kVar, "type_annotation", "variable types differ"},
    {ExprKind::kConstant, "data", "constant values differ"},
    {ExprKind::kCall, "args", "argument counts differ"},
    {ExprKind::kCall, "attrs", "attributes differ"},
    {ExprKind::kFunction, "params", "parameter counts differ"},
    {ExprKind::kFunction, "ret_type", "return types differ"},
    {ExprKind::kFunction, "attrs", "function attributes differ"},
    {ExprKind::kTuple, "fields", "tuple sizes differ"},
    {ExprKind::kTupleGetItem, "index", "tuple indices differ"},
    {ExprKind::kGlobalVar, "name", "global names differ"},
};

std::string difference(ExprKind kind, std::string_view field) {
  for (const Difference& d : kDifferences)
    if (d.kind == kind && d.field == field) return d.phrase;
  return std::string(expr_kind_name(kind)) + " " + std::string(field) + " differ";
}

template <typename T>
bool values_equal(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Type>) return type_equal(a, b);
  else if constexpr (std::is_same_v<T, Attrs>) return attrs_equal(a, b);
  else if constexpr (std::is_same_v<T, NDArray>) return a.bitwise_equal(b);  // NaN payloads included
  else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, int>) return a == b;
  else static_assert(!sizeof(T*), "say how structural equality compares this field type");
}

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
    case ExprKind::kIf: break;
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
    push(lhs.get(), rhs.get(), -1, nullptr, -1, false);
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
    const char* field;  // the parent's field holding this node
    int32_t index;      // its position in a child list; -1 for a single child
  };

  void push(const ExprNode* lhs, const ExprNode* rhs, int32_t parent, const char* field, int32_t index,
            bool binding) {
    int32_t path = -1;
    if (want_report_) {
      steps_.push_back({parent, field, index});
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
      out += s->field;
      if (s->index >= 0) out += "[" + std::to_string(s->index) + "]";
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

  // The fields a variable carries where it is bound (its name is a hint:
  // variables compare up to renaming).
  bool compare_var_fields(const Task& task) {
    auto* a = static_cast<const VarNode*>(task.lhs);
    auto* b = static_cast<const VarNode*>(task.rhs);
    bool equal = true;
    VarNode::for_each_field([&](const char* field, auto member) {
      if (equal && std::string_view(field) != "name_hint" && !values_equal(a->*member, b->*member))
        equal = differ(task, difference(ExprKind::kVar, field));
    });
    if (!equal) return false;
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
    // A pair of nodes each held by one parent is reached along one path only,
    // so only pairs with a shared side need remembering (chains stay cheap).
    // Variables are never skipped: each use is checked against its binding.
    bool shared = a->use_count() > 1 || b->use_count() > 1;
    if (a->kind() != ExprKind::kVar && shared && !seen_.insert({a, b}).second) return true;
    return visit_node(a, [&](auto* node) { return compare_node(task, node); });
  }

  bool compare_node(const Task& task, const VarNode*) {
    return task.binding ? compare_var_fields(task) : compare_var_use(task);
  }

  // Operators are interned: equal only when identical.
  bool compare_node(const Task& task, const OpNode*) {
    return task.lhs == task.rhs || differ(task, "operators differ");
  }

  // Span and device, then the value fields and child list lengths in table
  // order; the children are then compared in table order.
  template <typename N>
  bool compare_node(const Task& task, const N*) {
    auto* x = static_cast<const N*>(task.lhs);
    auto* y = static_cast<const N*>(task.rhs);
    if (options_.compare_spans && x->span() != y->span()) return differ(task, "spans differ");
    // A GlobalVar names a function; the function's devices are compared there.
    if (N::kKind != ExprKind::kGlobalVar && options_.compare_devices && x->virtual_device() != y->virtual_device())
      return differ(task, "devices differ");
    bool equal = true;
    N::for_each_field([&](const char* field, auto member) {
      using T = std::remove_cvref_t<decltype(x->*member)>;
      if (!equal) return;
      if constexpr (is_child_list_field<T>) {
        size_t m = (x->*member).size(), n = (y->*member).size();
        if (m != n)
          equal = differ(task, difference(N::kKind, field) + " (" + std::to_string(m) + " vs " + std::to_string(n) + ")");
      } else if constexpr (!is_child_field<T>) {
        if (!values_equal(x->*member, y->*member)) equal = differ(task, difference(N::kKind, field));
      }
    });
    if (!equal) return false;
    // Pushed in table order, then reversed, so they pop in table order.
    size_t first = stack_.size();
    N::for_each_field([&](const char* field, auto member) {
      using T = std::remove_cvref_t<decltype(x->*member)>;
      constexpr bool binding = is_binder_field<T>;
      if constexpr (is_child_list_field<T>) {
        const T& a = x->*member;
        const T& b = y->*member;
        for (size_t i = 0; i < a.size(); ++i) push(a[i].get(), b[i].get(), task.path, field, int32_t(i), binding);
      } else if constexpr (is_child_field<T>) {
        push((x->*member).get(), (y->*member).get(), task.path, field, -1, binding);
      }
    });
    std::reverse(stack_.begin() + first, stack_.end());
    return true;
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

}  // namespace switchyard
