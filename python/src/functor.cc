// ExprVisitor and ExprMutator, subclassable in Python. The C++ walk is
// iterative and post-order; a Python visit_* runs after the node's children
// are done and is called at most once per node, so Python never recurses as
// deep as the data. Which visit_* methods a subclass overrides is looked up
// once per top-level visit; the others then run entirely in C++.
#include <array>
#include <iterator>
#include <thread>

#include "common.h"
#include "ir/functor.h"

namespace switchyard::python {

namespace {

// The Python method name for each node kind (visit_tuple_getitem is the
// Python spelling of the C++ visit_tuple_get_item).
const char* visit_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::kVar: return "visit_var";
    case ExprKind::kConstant: return "visit_constant";
    case ExprKind::kCall: return "visit_call";
    case ExprKind::kFunction: return "visit_function";
    case ExprKind::kLet: return "visit_let";
    case ExprKind::kIf: return "visit_if";
    case ExprKind::kTuple: return "visit_tuple";
    case ExprKind::kTupleGetItem: return "visit_tuple_getitem";
    case ExprKind::kGlobalVar: return "visit_global_var";
    case ExprKind::kOp: return "visit_op";
  }
  return "visit";
}

constexpr ExprKind kAllKinds[] = {
#define SY_KIND(Name, lower) ExprKind::k##Name,
    SY_EXPR_KINDS(SY_KIND)
#undef SY_KIND
};
constexpr size_t kNumKinds = std::size(kAllKinds);

// The Python overrides of one visitor object, refreshed on each outermost
// visit, plus the roots it has visited: the C++ memo is keyed by node
// address, so the visited nodes are kept alive for as long as the memo is.
template <typename Base>
class PythonOverrides {
 public:
  // Counts nesting so that visits started from inside a visit_* reuse the
  // table.
  class Entry {
   public:
    Entry(PythonOverrides& o, py::handle py_self) : o_(o) {
      // The C++ walk state is not shared safely: Python may switch threads
      // inside a visit_*, so a second thread must not enter meanwhile.
      if (o_.depth_ > 0 && o_.owner_ != std::this_thread::get_id())
        throw py::value_error(type_name_of(py_self) + " is already visiting in another thread");
      if (o_.depth_ == 0) {
        o_.owner_ = std::this_thread::get_id();
        o_.refresh(py_self);
      }
      ++o_.depth_;
    }
    ~Entry() { --o_.depth_; }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

   private:
    PythonOverrides& o_;
  };

  const py::function& get(ExprKind kind) const { return table_[size_t(kind)]; }
  const std::string& class_name() const { return class_name_; }
  void keep(const Expr& root) { roots_.push_back(root); }

 private:
  // A method is overridden when the object's class (or the object itself)
  // has another attribute of that name than the bound base class.
  void refresh(py::handle py_self) {
    class_name_ = type_name_of(py_self);
    py::handle cls = py::type::handle_of(py_self);
    py::handle base = py::type::of<Base>();
    py::object own = py::getattr(py_self, "__dict__", py::dict());
    for (ExprKind kind : kAllKinds) {
      const char* name = visit_name(kind);
      bool overridden = !py::getattr(cls, name).is(py::getattr(base, name)) || own.contains(name);
      table_[size_t(kind)] = overridden ? py::function(py::getattr(py_self, name)) : py::function();
    }
  }
  std::array<py::function, kNumKinds> table_;
  std::string class_name_;
  std::vector<Expr> roots_;
  int depth_ = 0;
  std::thread::id owner_;
};

// Checks the kind of a node handed to a base visit_* from Python.
template <typename N>
Ref<N> node_arg(py::handle value, ExprKind kind) {
  Expr e = to_expr(value, visit_name(kind) + std::string("() argument"));
  if (e->kind() != kind)
    throw py::type_error(std::string(visit_name(kind)) + "() expects a " + expr_kind_name(kind) + ", got a " +
                         expr_kind_name(e->kind()));
  return downcast<N>(e);
}

class PyExprMutator : public ExprMutator {
 public:
  py::object visit_entry(py::handle py_self, py::handle value) {
    typename PythonOverrides<ExprMutator>::Entry entry(overrides_, py_self);
    if (py::isinstance<IRModule>(value)) {
      // A copy: a visit_* may change the caller's module object meanwhile.
      IRModule mod = value.cast<IRModule>();
      for (const auto& [name, fn] : mod.functions()) overrides_.keep(fn);
      return py::cast(mutate_module(mod));
    }
    Expr e = to_expr(value, "visit() argument");
    // A memoized node is already kept alive (it is reachable from a kept root).
    if (!memo_.count(e.get())) overrides_.keep(e);
    return py::cast(mutate(e));
  }

#define SY_OVERRIDE(Name, lower)                                            \
  Expr visit_##lower(const Name& n) override {                             \
    if (const py::function& f = overrides_.get(Name##Node::kKind)) return call_python(f, n); \
    return ExprMutator::visit_##lower(n);                                  \
  }                                                                        \
  Expr base_##lower(const Name& n) { return ExprMutator::visit_##lower(n); }
  SY_EXPR_KINDS(SY_OVERRIDE)
#undef SY_OVERRIDE

 private:
  Expr call_python(const py::function& f, const Expr& node) {
    py::object result = f(node);
    if (result.is_none() || !py::isinstance<ExprNode>(result))
      throw py::type_error(overrides_.class_name() + "." + visit_name(node->kind()) + " must return an Expr, got " +
                           type_name_of(result));
    return result.cast<Expr>();
  }
  PythonOverrides<ExprMutator> overrides_;
};

class PyExprVisitor : public ExprVisitor {
 public:
  void visit_entry(py::handle py_self, py::handle value) {
    typename PythonOverrides<ExprVisitor>::Entry entry(overrides_, py_self);
    if (py::isinstance<IRModule>(value)) {
      IRModule mod = value.cast<IRModule>();
      for (const auto& [name, fn] : mod.functions()) {
        overrides_.keep(fn);
        visit(fn);
      }
      return;
    }
    Expr e = to_expr(value, "visit() argument");
    if (!visited_.count(e.get())) overrides_.keep(e);
    visit(e);
  }

#define SY_OVERRIDE(Name, lower)                                                       \
  void visit_##lower(const Name& n) override {                                        \
    if (const py::function& f = overrides_.get(Name##Node::kKind)) f(n);              \
  }
  SY_EXPR_KINDS(SY_OVERRIDE)
#undef SY_OVERRIDE

 private:
  PythonOverrides<ExprVisitor> overrides_;
};

}  // namespace

void bind_functor(py::module_& ir) {
  py::class_<ExprVisitor, PyExprVisitor> visitor(
      ir, "ExprVisitor",
      "Visits every node reachable from an expression once, children first. Override visit_<kind>(node); "
      "the defaults do nothing.");
  visitor.def(py::init_alias<>())
      .def(
          "visit",
          [](py::object self, py::handle value) { static_cast<PyExprVisitor&>(self.cast<ExprVisitor&>()).visit_entry(self, value); },
          py::arg("expr"), "Visits an expression (or every function of a module).");
#define SY_BASE(Name, lower)                                                                      \
  visitor.def(                                                                                    \
      visit_name(ExprKind::k##Name),                                                              \
      [](ExprVisitor&, py::handle n) { node_arg<Name##Node>(n, Name##Node::kKind); }, py::arg("node"));
  SY_EXPR_KINDS(SY_BASE)
#undef SY_BASE

  py::class_<ExprMutator, PyExprMutator> mutator(
      ir, "ExprMutator",
      "Rebuilds an expression bottom-up. Override visit_<kind>(node) and return the replacement; when it is "
      "called every child is already mutated (self.visit(child) is a lookup). The defaults rebuild through "
      "with_fields in C++. A replacement that states no device takes the replaced node's, and it and "
      "every new node inside it that states no span take its span; new nodes inside it stay unplaced "
      "(after planning, the pass infrastructure places them).");
  mutator.def(py::init_alias<>())
      .def(
          "visit", [](py::object self, py::handle value) { return static_cast<PyExprMutator&>(self.cast<ExprMutator&>()).visit_entry(self, value); },
          py::arg("expr"), "The mutated expression (memoized), or for an IRModule the module with every function mutated.");
#define SY_BASE(Name, lower)                                                                                \
  mutator.def(                                                                                              \
      visit_name(ExprKind::k##Name),                                                                        \
      [](ExprMutator& self, py::handle n) {                                                                 \
        return static_cast<PyExprMutator&>(self).base_##lower(node_arg<Name##Node>(n, Name##Node::kKind)); \
      },                                                                                                    \
      py::arg("node"));
  SY_EXPR_KINDS(SY_BASE)
#undef SY_BASE
}

}  // namespace switchyard::python
