// Shared pieces of the Python bindings: the node holder (Ref<T>), argument
// conversion that turns every bad Python value into a TypeError instead of a
// null node, and the per-concern binding entry points.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "runtime/ndarray.h"
#include "support/error.h"

// Nodes and types are held by the intrusive Ref<T>; its get() is const.
PYBIND11_DECLARE_HOLDER_TYPE(T, switchyard::Ref<T>, true)

namespace pybind11::detail {
template <typename T>
struct holder_helper<switchyard::Ref<T>> {
  static T* get(const switchyard::Ref<T>& p) { return const_cast<T*>(p.get()); }
};
}  // namespace pybind11::detail

namespace switchyard::python {

namespace py = pybind11;

// "int", "NoneType": the Python type name of a value, for messages.
std::string type_name_of(py::handle value);
// Whether `value` is a list or a tuple.
bool is_sequence(py::handle value);
// Raises TypeError "`what` must be `expected`, got <its type>".
[[noreturn]] void wrong_type(const std::string& what, const std::string& expected, py::handle value);

// `value` as a non-null `Ref` to a `Node`, or a TypeError saying it must be `expected`.
template <typename Ref, typename Node>
Ref to_node(py::handle value, const std::string& what, const char* expected) {
  if (!value.is_none() && py::isinstance<Node>(value)) {
    Ref ref = value.cast<Ref>();
    if (ref) return ref;
  }
  wrong_type(what, expected, value);
}

// A list or tuple, each item converted by `convert` (which names it what[i]).
template <typename T>
std::vector<T> to_list(py::handle value, const std::string& what, const char* expected,
                       T (*convert)(py::handle, const std::string&)) {
  if (!is_sequence(value)) wrong_type(what, expected, value);
  std::vector<T> out;
  size_t i = 0;
  for (py::handle item : value) out.push_back(convert(item, what + "[" + std::to_string(i++) + "]"));
  return out;
}

// Plain values, as binding arguments taken as py::handle: a value of another
// type is a sy.UsageError (also a TypeError) naming `what`, where pybind11's
// own conversion would raise a bare TypeError listing C++ signatures.
std::string to_str(py::handle value, const std::string& what);
bool to_bool(py::handle value, const std::string& what);
int64_t to_int(py::handle value, const std::string& what);
int to_int32(py::handle value, const std::string& what);

// Expressions: TypeError naming `what` when `value` is not one (None included).
Expr to_expr(py::handle value, const std::string& what);
std::vector<Expr> to_expr_list(py::handle value, const std::string& what);
Var to_var(py::handle value, const std::string& what);
std::vector<Var> to_var_list(py::handle value, const std::string& what);
Function to_function(py::handle value, const std::string& what);

// None gives a null type.
Type to_type_or_null(py::handle value, const std::string& what);
std::vector<Type> to_type_list(py::handle value, const std::string& what);
// None gives null (unconstrained); a string is parsed ("cpu:0").
const VirtualDevice* to_virtual_device(py::handle value, const std::string& what);
// None gives the empty span.
Span to_span(py::handle value, const std::string& what);
// A Span, or None when it is empty.
py::object span_or_none(const Span& span);

// Attributes: None, bool, int, float, str, or a list/tuple of ints or floats.
AttrValue to_attr_value(py::handle value, const std::string& what);
std::vector<std::pair<std::string, AttrValue>> to_attr_entries(py::handle mapping, const std::string& what);
py::object attr_value_to_python(const AttrValue& value);
// Attributes for a call of `op`: normalized against the operator's spec when
// `op` is an operator, as given otherwise (null when none are given).
Attrs call_attrs(const Expr& op, py::handle mapping);

// The DType of a native-order NumPy dtype; nullopt when Switchyard has none.
std::optional<DType> dtype_of_numpy(py::handle numpy_dtype);
// NumPy interop (copies). Unsupported dtypes raise TypeError naming `what`.
NDArray ndarray_from_python(py::handle value, const std::string& what);
py::object ndarray_to_numpy(const NDArray& array);

// The exception class for an error of `kind` that is also the builtin
// exception `builtin` (TypeError, KeyError, ...): the kind's own class when
// it already is one (or `builtin` is null), else a subclass of both.
PyObject* error_class(ErrorKind kind, PyObject* builtin);

// Binding entry points, one per source file.
void bind_errors(py::module_& m);
void bind_types(py::module_& ir);
void bind_nodes(py::module_& ir);
void bind_module(py::module_& m, py::module_& ir);
void bind_functor(py::module_& ir);
void bind_transform(py::module_& transform);
void bind_runtime(py::module_& m, py::module_& runtime);
void bind_build(py::module_& m);
void bind_frontend(py::module_& frontend);
void bind_pattern(py::module_& pattern);
// Run after every class is bound: makes methods of a never-initialized object
// raise TypeError instead of reading uninitialized memory.
void guard_uninitialized_instances();

}  // namespace switchyard::python
