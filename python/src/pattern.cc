// Bindings of the pattern language (sy.pattern): Pattern objects built with
// wildcard(), is_op(...)(...), `|`, .has_attr/.has_dtype/.has_shape/.has_type,
// match(),
// and rewrite() with Python callbacks in the form of TVM's DFPatternCallback
// (an object with `pattern` and `callback(pre, post, node_map)`).
#include "common.h"
#include "op/registry.h"
#include "placement/place_new_nodes.h"
#include "runtime/dtype.h"
#include "support/error.h"
#include "transform/pattern.h"
#include "transform/pattern_rewrite.h"

namespace switchyard::python {

namespace {

Pattern to_pattern(py::handle value, const std::string& what) {
  return to_node<Pattern, PatternNode>(value, what, "a Pattern (wildcard(), is_op(...), ...)");
}

std::vector<Pattern> to_pattern_list(py::handle values, const std::string& what) {
  return to_list<Pattern>(values, what, "a list of Pattern", to_pattern);
}

// is_op with Python's close matches for a misspelled operator name.
Pattern op_pattern(py::handle name_arg) {
  std::string name = to_str(name_arg, "is_op() name");
  if (!find_op_def(name)) {
    py::list names;
    for (const OpDef* def : all_op_defs()) names.append(def->name);
    py::list close = py::module_::import("difflib").attr("get_close_matches")(name, names, 3, 0.6);
    std::string hint;
    for (py::handle c : close) hint += (hint.empty() ? "" : "' or '") + c.cast<std::string>();
    throw Error(ErrorKind::kUsage,
                "is_op: unknown operator '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
  }
  return is_op(name);
}

Pattern dtype_pattern(const Pattern& inner, py::handle name_arg) {
  std::string name = to_str(name_arg, "has_dtype() dtype");
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) throw Error(ErrorKind::kUsage, "has_dtype: unknown dtype '" + name + "'");
  return has_type(inner, dtype, std::nullopt);
}

Pattern shape_pattern(const Pattern& inner, py::handle shape) {
  if (!py::isinstance<py::list>(shape) && !py::isinstance<py::tuple>(shape))
    throw py::type_error("has_shape() takes a tuple of ints, got " + type_name_of(shape));
  std::vector<int64_t> dims;
  for (py::handle d : shape) {
    if (!PyLong_Check(d.ptr()) || PyBool_Check(d.ptr()))
      throw py::type_error("has_shape() dimensions must be ints, got " + type_name_of(d));
    dims.push_back(d.cast<int64_t>());
  }
  return has_type(inner, std::nullopt, std::move(dims));
}

// TVM's has_type: a tensor type is its dtype and shape together.
Pattern tensor_type_pattern(const Pattern& inner, py::handle type) {
  if (!py::isinstance<TensorTypeNode>(type))
    throw py::type_error("has_type() takes a TensorType, got " + type_name_of(type));
  TensorType t = type.cast<TensorType>();
  // A pattern's shape is static: a symbolic one would read as a scalar's.
  if (!t->is_static())
    throw Error(ErrorKind::kUsage, "has_type() takes a static TensorType yet, got " + type_to_string(t));
  return has_type(inner, t->dtype, t->shape);
}

// {pattern: [expr]}, as TVM's node_map: the Pattern objects the callback
// holds (self.x) are the keys, since a node keeps its one Python object.
py::dict node_map_to_python(const MatchMap& node_map) {
  py::dict out;
  for (const auto& [pattern, expr] : node_map) {
    py::list matched;
    matched.append(py::cast(expr));
    out[py::cast(Pattern(pattern))] = matched;
  }
  return out;
}

int tuple_index(py::handle index) {
  int64_t i = to_int(index, "is_tuple_get_item() index");
  if (i < 0 || i > INT32_MAX) throw py::index_error("is_tuple_get_item() index " + std::to_string(i) + " is out of range");
  return int(i);
}

RewriteCallback python_callback(py::handle callback) {
  std::string name = type_name_of(callback);
  Pattern pattern = to_pattern(py::getattr(callback, "pattern", py::none()),
                               name + ".pattern (set in __init__)");
  py::object fn = py::getattr(callback, "callback", py::none());
  if (!PyCallable_Check(fn.ptr())) throw py::type_error(name + " needs a callback(pre, post, node_map) method");
  RewriteCallback out;
  out.pattern = pattern;
  out.require_type = py::getattr(callback, "require_type", py::bool_(false)).cast<bool>();
  out.rewrite_once = py::getattr(callback, "rewrite_once", py::bool_(false)).cast<bool>();
  out.name = name;
  out.rewrite = [fn, name](const Expr& pre, const Expr& post, const MatchMap& node_map) -> Expr {
    py::object result = fn(pre, post, node_map_to_python(node_map));
    // None is refused: a callback that forgets its return would silently do nothing.
    if (result.is_none() || !py::isinstance<ExprNode>(result))
      throw py::type_error(name + ".callback must return an Expr (post, to keep the match), got " +
                           type_name_of(result));
    return result.cast<Expr>();
  };
  return out;
}

py::object rewrite_python(py::handle callbacks, py::handle target, py::handle mod) {
  std::vector<RewriteCallback> cs;
  if (py::isinstance<py::list>(callbacks) || py::isinstance<py::tuple>(callbacks)) {
    for (py::handle c : callbacks) cs.push_back(python_callback(c));
  } else {
    cs.push_back(python_callback(callbacks));
  }
  if (py::isinstance<IRModule>(target)) {
    if (!mod.is_none()) throw py::type_error("rewrite() takes mod= only with an expression");
    // As after a pass: on a planned module the callbacks' new nodes are placed.
    return py::cast(place_new_nodes(rewrite(cs, target.cast<IRModule>())));
  }
  Expr e = to_expr(target, "rewrite() target (an Expr or IRModule)");
  if (mod.is_none()) return py::cast(rewrite(cs, e));
  if (!py::isinstance<IRModule>(mod)) throw py::type_error("mod must be an IRModule, got " + type_name_of(mod));
  IRModule m = mod.cast<IRModule>();
  return py::cast(rewrite(cs, e, &m));
}

}  // namespace

void bind_pattern(py::module_& m) {
  py::class_<PatternNode, Pattern>(
      m, "Pattern",
      "A dataflow pattern. Call it with argument patterns to match calls (is_op(\"add\")(wildcard(), "
      "is_constant())); combine with `|`; constrain with has_attr, has_dtype, has_shape.")
      .def(
          "__call__",
          [](const Pattern& self, py::args args) { return is_call(self, to_pattern_list(args, "argument")); },
          "A pattern of a call of this callee with these argument patterns.")
      .def("__or__",
           [](const Pattern& self, py::handle other) { return either(self, to_pattern(other, "`|` operand")); })
      .def(
          "has_attr",
          [](const Pattern& self, py::handle attrs) { return has_attrs(self, to_attr_entries(attrs, "has_attr()")); },
          py::arg("attrs"), "Also requires these call (or function) attributes, e.g. {\"axis\": [1]}.")
      .def("has_dtype", &dtype_pattern, py::arg("dtype"), "Also requires a tensor of this dtype (\"float32\").")
      .def("has_shape", &shape_pattern, py::arg("shape"), "Also requires a tensor of this shape.")
      .def("has_type", &tensor_type_pattern, py::arg("type"), "Also requires this TensorType (dtype and shape).")
      .def(
          "match", [](const Pattern& self, py::handle e) { return match(self, to_expr(e, "match() expression")); },
          py::arg("expr"), "Whether the expression matches.")
      .def("__repr__", &pattern_to_string)
      .def("__str__", &pattern_to_string);

  m.def("wildcard", &wildcard, "Matches any expression.");
  m.def("is_op", &op_pattern, py::arg("name"), "Matches the operator `name`; call it to match its calls.");
  m.def("is_constant", &is_constant, "Matches any constant.");
  m.def(
      "is_var", [](py::handle name) { return is_var(to_str(name, "is_var() name")); }, py::arg("name") = "",
      "Matches a variable (named `name`, when given).");
  m.def(
      "is_tuple", [](py::handle fields) { return is_tuple(to_pattern_list(fields, "is_tuple() fields")); },
      py::arg("fields"), "Matches a tuple whose fields match these patterns.");
  m.def(
      "is_tuple_get_item",
      [](py::handle tuple, py::handle index) {
        return is_tuple_get_item(to_pattern(tuple, "is_tuple_get_item() tuple"),
                                 index.is_none() ? -1 : tuple_index(index));
      },
      py::arg("tuple"), py::arg("index") = py::none(), "Matches element `index` (any, when None) of a tuple.");
  m.def(
      "match",
      [](py::handle pattern, py::handle e) { return match(to_pattern(pattern, "pattern"), to_expr(e, "expr")); },
      py::arg("pattern"), py::arg("expr"), "Whether `expr` matches `pattern`.");
  m.def("rewrite", &rewrite_python, py::arg("callbacks"), py::arg("expr"), py::arg("mod") = py::none(),
        "Rewrites an expression or every function of a module with callbacks until nothing changes.");
}

}  // namespace switchyard::python
