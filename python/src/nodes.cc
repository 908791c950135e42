// Bindings of the expression nodes: constructors taking virtual_device= and
// span=, read-only fields, and with_fields(**changes), which rebuilds through
// the C++ with_fields so every field not named (device, span, type,
// attributes) is carried.
#include "analysis/describe.h"
#include "common.h"
#include "ir/with_fields.h"
#include "op/registry.h"
#include "text/printer.h"

namespace switchyard::python {

namespace {

NodeMeta meta_of(py::handle virtual_device, py::handle span) {
  return NodeMeta{to_virtual_device(virtual_device, "virtual_device"), to_span(span, "span"), Type()};
}

// A callee: any expression, or an operator by name.
Expr callee_arg(py::handle op) {
  if (py::isinstance<py::str>(op)) return op_get(op.cast<std::string>());
  return to_expr(op, "op");
}

int index_arg(py::handle value, const char* what = "index") {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    throw py::type_error(std::string(what) + " must be an int, got " + type_name_of(value));
  long long v = PyLong_AsLongLong(value.ptr());
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (v < 0 || v > INT32_MAX) throw py::index_error("tuple index " + std::to_string(v) + " is out of range");
  return int(v);
}

std::string name_arg(py::handle value, const char* what) {
  if (!py::isinstance<py::str>(value)) throw py::type_error(std::string(what) + " must be a str, got " + type_name_of(value));
  return value.cast<std::string>();
}

// with_fields(**changes): each kind's own fields plus the metadata fields.
struct FieldChanges {
  std::string kind;
  std::vector<std::string> allowed;
  py::dict given;

  bool has(const char* name) const { return given.contains(name); }
  py::object get(const char* name) const { return given[name]; }

  template <typename C>
  void meta(C& c) const {
    if (has("virtual_device")) {
      const VirtualDevice* vd = to_virtual_device(get("virtual_device"), "virtual_device");
      c.virtual_device = vd ? vd : VirtualDevice::unconstrained();
    }
    if (has("span")) c.span = to_span(get("span"), "span");
    if (has("checked_type")) c.checked_type = to_type_or_null(get("checked_type"), "checked_type");
  }
};

FieldChanges check_changes(const Expr& e, const py::kwargs& kwargs, std::vector<std::string> own) {
  FieldChanges fc{expr_kind_name(e->kind()), std::move(own), py::dict()};
  for (const char* m : {"virtual_device", "span", "checked_type"}) fc.allowed.push_back(m);
  for (auto item : kwargs) {
    std::string key = py::str(item.first);
    if (std::find(fc.allowed.begin(), fc.allowed.end(), key) == fc.allowed.end()) {
      std::string names;
      for (const std::string& a : fc.allowed) names += (names.empty() ? "" : ", ") + a;
      throw py::type_error(fc.kind + ".with_fields() got an unexpected field '" + key + "' (fields: " + names + ")");
    }
    fc.given[item.first] = item.second;
  }
  return fc;
}

// A field's new value from Python; errors name the field.
template <typename T>
T field_from_python(py::handle value, const char* name) {
  if constexpr (std::is_same_v<T, std::string>) return name_arg(value, name);
  else if constexpr (std::is_same_v<T, Type>) return to_type_or_null(value, name);
  else if constexpr (std::is_same_v<T, NDArray>) return ndarray_from_python(value, name);
  else if constexpr (std::is_same_v<T, Expr>) return to_expr(value, name);
  else if constexpr (std::is_same_v<T, std::vector<Expr>>) return to_expr_list(value, name);
  else if constexpr (std::is_same_v<T, Var>) return to_var(value, name);
  else if constexpr (std::is_same_v<T, std::vector<Var>>) return to_var_list(value, name);
  else if constexpr (std::is_same_v<T, int>) return index_arg(value, name);
  else if constexpr (std::is_same_v<T, Attrs>) return call_attrs(Expr(), value);
  else static_assert(!sizeof(T*), "say how a Python value converts to this field type");
}

// Fields whose conversion depends on the node; the generic conversion skips
// the fields set here.
template <typename N, typename C>
void convert_dependent_fields(const Ref<N>&, const FieldChanges&, C&) {}

// A callee may be an operator name; attributes are normalized for the callee.
void convert_dependent_fields(const Call& call, const FieldChanges& fc, CallChanges& c) {
  Expr op = call->op;
  if (fc.has("op")) c.op = op = callee_arg(fc.get("op"));
  if (fc.has("attrs")) {
    c.attrs = call_attrs(op, fc.get("attrs"));
  } else if (!op.same_as(call->op) && is<OpNode>(op)) {
    // A new operator: the current attributes, completed for it.
    std::vector<std::pair<std::string, AttrValue>> entries;
    if (call->attrs) entries = call->attrs->entries();
    c.attrs = normalize_attrs(*as<OpNode>(op)->def, std::move(entries));
  }
}

// A constant's type follows its data.
void convert_dependent_fields(const Constant&, const FieldChanges& fc, ConstantChanges& c) {
  if (!fc.has("data") || fc.has("checked_type")) return;
  c.data = ndarray_from_python(fc.get("data"), "data");
  c.checked_type = Type(tensor_type(c.data->shape(), c.data->dtype()));
}

template <typename N, typename C>
Expr with_fields_of(const Ref<N>& n, const py::kwargs& kwargs) {
  std::vector<std::string> own;
  C::for_each_field([&](const char* name, auto) { own.push_back(name); });
  FieldChanges fc = check_changes(n, kwargs, std::move(own));
  C c;
  convert_dependent_fields(n, fc, c);
  C::for_each_field([&](const char* name, auto member) {
    using T = typename std::remove_reference_t<decltype(c.*member)>::value_type;
    if (fc.has(name) && !(c.*member)) c.*member = field_from_python<T>(fc.get(name), name);
  });
  fc.meta(c);
  return with_fields(n, std::move(c));
}

Expr with_fields_python(const Expr& e, const py::kwargs& kwargs) {
  switch (e->kind()) {
#define SY_CASE(Name, lower) \
  case ExprKind::k##Name:    \
    return with_fields_of<Name##Node, Name##Changes>(downcast<Name##Node>(e), kwargs);
    SY_REBUILT_EXPR_KINDS(SY_CASE)
#undef SY_CASE
    case ExprKind::kOp:
      if (kwargs.size() != 0) throw py::type_error("Op nodes are interned operators and cannot be changed");
      return e;
  }
  return e;
}

py::list exprs_to_list(const std::vector<Expr>& xs) {
  py::list out;
  for (const Expr& x : xs) out.append(py::cast(x));
  return out;
}

// Adds a read-only property per field of the kind's table.
template <typename N, typename Class>
Class bind_fields(Class cls) {
  N::for_each_field([&](const char* name, auto member) {
    using T = std::remove_cvref_t<decltype(std::declval<const N&>().*member)>;
    if constexpr (std::is_same_v<T, NDArray>) {
      cls.def_property_readonly(name, [member](const N& n) { return ndarray_to_numpy(n.*member); },
                                "The value as a NumPy array (a copy).");
    } else if constexpr (std::is_same_v<T, std::vector<Expr>>) {
      cls.def_property_readonly(name, [member](const N& n) { return exprs_to_list(n.*member); });
    } else {
      cls.def_property_readonly(name, [member](const N& n) { return T(n.*member); });
    }
  });
  return cls;
}

void bind_expr_base(py::module_& ir) {
  py::class_<ExprNode, Expr>(ir, "Expr", "Base of every expression node.")
      .def_property_readonly("kind", [](const ExprNode& e) { return expr_kind_name(e.kind()); })
      .def_property_readonly(
          "virtual_device", [](const ExprNode& e) { return const_cast<VirtualDevice*>(e.virtual_device()); },
          py::return_value_policy::reference)
      .def_property_readonly("span", [](const ExprNode& e) { return span_or_none(e.span()); })
      .def_property_readonly("checked_type", [](const ExprNode& e) { return e.checked_type(); })
      .def("with_fields", &with_fields_python,
           "A copy with the named fields changed; every other field (device, span, type, attributes) is "
           "carried. Returns this node when nothing changed.")
      .def("same_as", [](const Expr& a, py::handle b) { return py::isinstance<ExprNode>(b) && a.same_as(b.cast<Expr>()); })
      .def("astext",
           [](const Expr& e, py::handle show_devices, py::handle show_weights) {
             PrintOptions o;
             o.devices = to_bool(show_devices, "show_devices") ? PrintOptions::Devices::kAll
                                                               : PrintOptions::Devices::kNone;
             o.show_weights = to_bool(show_weights, "show_weights");
             return print_expr(e, o);
           },
           py::arg("show_devices") = true, py::kw_only(), py::arg("show_weights") = false,
           "The text form; constants over 16 elements are elided as meta[Constant][i] unless show_weights=True.")
      .def("__str__", [](const Expr& e) { return print_expr(e, {.show_weights = false}); })
      .def("__repr__", [](const Expr& e) { return std::string(expr_kind_name(e->kind())) + "(" + describe_node(e) + ")"; })
      // Nodes compare by identity (structural_equal compares structure), so
      // they can key dicts and sets.
      .def("__eq__", [](const Expr& a, py::handle b) { return py::isinstance<ExprNode>(b) && a.same_as(b.cast<Expr>()); })
      .def("__hash__", [](const Expr& e) { return std::hash<const void*>()(e.get()); });
}

void bind_leaves(py::module_& ir) {
  bind_fields<VarNode>(py::class_<VarNode, ExprNode, Var>(ir, "Var", "A variable: a function parameter or let binding."))
      .def(py::init([](py::handle name_hint, py::handle type_annotation, py::handle vd, py::handle span) {
             return make_var(name_arg(name_hint, "name_hint"), to_type_or_null(type_annotation, "type_annotation"),
                             meta_of(vd, span));
           }),
           py::arg("name_hint"), py::arg("type_annotation") = py::none(), py::kw_only(),
           py::arg("virtual_device") = py::none(), py::arg("span") = py::none());

  bind_fields<ConstantNode>(py::class_<ConstantNode, ExprNode, Constant>(ir, "Constant", "A tensor constant."))
      .def(py::init([](py::handle data, py::handle vd, py::handle span) {
             return make_constant(ndarray_from_python(data, "data"), meta_of(vd, span));
           }),
           py::arg("data"), py::kw_only(), py::arg("virtual_device") = py::none(), py::arg("span") = py::none())
      .def_property_readonly("dtype", [](const ConstantNode& c) { return dtype_name(c.data.dtype()); })
      .def_property_readonly("shape", [](const ConstantNode& c) { return py::tuple(py::cast(c.data.shape())); });

  bind_fields<GlobalVarNode>(py::class_<GlobalVarNode, ExprNode, GlobalVar>(ir, "GlobalVar", "A reference to a module-level function, by name."))
      .def(py::init([](py::handle name, py::handle vd, py::handle span) {
             return make_global_var(name_arg(name, "name"), meta_of(vd, span));
           }),
           py::arg("name"), py::kw_only(), py::arg("virtual_device") = py::none(), py::arg("span") = py::none());

  py::class_<OpNode, ExprNode, Op>(ir, "Op", "An operator (interned: Op(\"add\") is always the same node).")
      .def(py::init([](py::handle name) { return op_get(name_arg(name, "name")); }), py::arg("name"))
      .def_static("get", [](py::handle name) { return op_get(name_arg(name, "name")); }, py::arg("name"))
      .def_property_readonly("name", [](const OpNode& o) { return o.name; })
      .def_property_readonly("num_inputs", [](const OpNode& o) { return o.def ? o.def->num_inputs : -1; })
      .def_property_readonly("pattern", [](const OpNode& o) { return o.def ? op_pattern_name(o.def->pattern) : "opaque"; })
      .def_property_readonly("doc", [](const OpNode& o) { return o.def ? o.def->doc : std::string(); })
      .def_property_readonly("attr_names", [](const OpNode& o) {
        std::vector<std::string> out;
        if (o.def)
          for (const AttrSpec& s : o.def->attrs) out.push_back(s.name);
        return out;
      });
}

void bind_compounds(py::module_& ir) {
  bind_fields<CallNode>(py::class_<CallNode, ExprNode, Call>(ir, "Call", "A call of an operator or function."))
      .def(py::init([](py::handle op, py::handle args, py::handle attrs, py::handle vd, py::handle span) {
             Expr callee = callee_arg(op);
             return make_call(callee, to_expr_list(args, "args"), call_attrs(callee, attrs), meta_of(vd, span));
           }),
           py::arg("op"), py::arg("args"), py::arg("attrs") = py::none(), py::kw_only(),
           py::arg("virtual_device") = py::none(), py::arg("span") = py::none());

  bind_fields<FunctionNode>(py::class_<FunctionNode, ExprNode, Function>(ir, "Function",
                                               "A function. Its virtual_device is where its result is produced."))
      .def(py::init([](py::handle params, py::handle body, py::handle ret_type, py::handle vd, py::handle span,
                       py::handle attrs) {
             return make_function(to_var_list(params, "params"), to_expr(body, "body"),
                                  to_type_or_null(ret_type, "ret_type"), call_attrs(Expr(), attrs), meta_of(vd, span));
           }),
           py::arg("params"), py::arg("body"), py::arg("ret_type") = py::none(), py::kw_only(),
           py::arg("virtual_device") = py::none(), py::arg("span") = py::none(), py::arg("attrs") = py::none())
      .def_property_readonly("is_primitive", &FunctionNode::is_primitive);

  bind_fields<LetNode>(py::class_<LetNode, ExprNode, Let>(ir, "Let", "let var = value; body"))
      .def(py::init([](py::handle var, py::handle value, py::handle body, py::handle vd, py::handle span) {
             return make_let(to_var(var, "var"), to_expr(value, "value"), to_expr(body, "body"), meta_of(vd, span));
           }),
           py::arg("var"), py::arg("value"), py::arg("body"), py::kw_only(), py::arg("virtual_device") = py::none(),
           py::arg("span") = py::none());

  bind_fields<IfNode>(py::class_<IfNode, ExprNode, If>(ir, "If", "if (cond) { then_branch } else { else_branch }"))
      .def(py::init([](py::handle cond, py::handle then_branch, py::handle else_branch, py::handle vd, py::handle span) {
             return make_if(to_expr(cond, "cond"), to_expr(then_branch, "then_branch"),
                            to_expr(else_branch, "else_branch"), meta_of(vd, span));
           }),
           py::arg("cond"), py::arg("then_branch"), py::arg("else_branch"), py::kw_only(),
           py::arg("virtual_device") = py::none(), py::arg("span") = py::none());

  bind_fields<TupleNode>(py::class_<TupleNode, ExprNode, Tuple>(ir, "Tuple", "A tuple of values."))
      .def(py::init([](py::handle fields, py::handle vd, py::handle span) {
             return make_tuple(to_expr_list(fields, "fields"), meta_of(vd, span));
           }),
           py::arg("fields"), py::kw_only(), py::arg("virtual_device") = py::none(), py::arg("span") = py::none())
      .def("__len__", [](const TupleNode& t) { return t.fields.size(); });

  bind_fields<TupleGetItemNode>(py::class_<TupleGetItemNode, ExprNode, TupleGetItem>(ir, "TupleGetItem", "tuple.index"))
      .def(py::init([](py::handle tuple, py::handle index, py::handle vd, py::handle span) {
             return make_tuple_get_item(to_expr(tuple, "tuple"), index_arg(index), meta_of(vd, span));
           }),
           py::arg("tuple"), py::arg("index"), py::kw_only(), py::arg("virtual_device") = py::none(),
           py::arg("span") = py::none());
}

py::list op_definitions() {
  py::list out;
  for (const OpDef* def : all_op_defs()) {
    py::list attrs;
    for (const AttrSpec& s : def->attrs) {
      bool required = std::holds_alternative<std::monostate>(s.default_value) && !s.optional;
      attrs.append(py::dict(py::arg("name") = s.name, py::arg("required") = required,
                            py::arg("default") = attr_value_to_python(s.default_value)));
    }
    out.append(py::dict(py::arg("name") = def->name, py::arg("num_inputs") = def->num_inputs,
                        py::arg("attrs") = attrs, py::arg("pattern") = op_pattern_name(def->pattern),
                        py::arg("doc") = def->doc));
  }
  return out;
}

}  // namespace

void bind_nodes(py::module_& ir) {
  bind_expr_base(ir);
  bind_leaves(ir);
  bind_compounds(ir);
  ir.def("op_definitions", &op_definitions, "Every registered operator: name, num_inputs, attrs, pattern, doc.");
  ir.def(
      "make_op_call",
      [](py::handle name, py::handle args, py::handle attrs, py::handle vd, py::handle span) {
        Op op = op_get(name_arg(name, "name"));
        return make_call(op, to_expr_list(args, "args"), call_attrs(op, attrs), meta_of(vd, span));
      },
      py::arg("name"), py::arg("args"), py::arg("attrs") = py::none(), py::arg("virtual_device") = py::none(),
      py::arg("span") = py::none());
}

}  // namespace switchyard::python
