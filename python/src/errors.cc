// Python exceptions for switchyard errors: sy.Error and one subclass per
// error kind, each carrying .message (the plain message), .span (a Span or
// None) and .kind; str() is the rendered diagnostic with the source line.
// Each kind also derives from the builtin a Python caller would catch for
// that mistake, so `except ValueError` works without knowing switchyard.
// Where a mistake is another builtin's (a value of the wrong Python type, a
// missing key, an index out of range), the error is a subclass of its kind
// and that builtin too: every exception the package raises is a sy.Error.
#include <map>

#include "common.h"
#include "runtime/clipped_text.h"
#include "runtime/runtime_error.h"
#include "support/error.h"

namespace switchyard::python {

namespace {

// Exception classes, made once at import and kept for the process's life
// (pybind11's advice for objects used by translators).
struct ErrorClasses {
  PyObject* base = nullptr;
  PyObject* by_kind[8] = {};
  // (kind, builtin) -> the subclass of both, made on first use.
  std::map<std::pair<int, PyObject*>, PyObject*> combined;
};

ErrorClasses& classes() {
  static ErrorClasses c;
  return c;
}

int kind_index(ErrorKind kind) { return static_cast<int>(kind); }

// Python's name of a kind's class ("UsageError"), from the class itself.
std::string class_name(PyObject* cls) { return py::str(py::handle(cls).attr("__name__")); }

void raise(PyObject* cls, const std::string& rendered, const std::string& message, const Span& span,
           const char* kind) {
  py::object exc = py::reinterpret_borrow<py::object>(cls)(rendered);
  exc.attr("message") = message;
  exc.attr("span") = span_or_none(span);
  exc.attr("kind") = kind;
  PyErr_SetObject(cls, exc.ptr());
}

// Instead of handing a method uninitialized memory for an object made with
// Class.__new__(Class) and never __init__-ed (pybind11's lazy allocation),
// raise TypeError.
void* refuse_lazy_allocation(size_t) {
  throw py::type_error("this switchyard object was never initialized (its __init__ was not called)");
}

// A usage error raised where Python would raise `builtin` (TypeError for
// a value of the wrong type, ...): a sy.UsageError that is also `builtin`.
void raise_usage(PyObject* builtin, const std::string& message) {
  PyObject* cls = error_class(ErrorKind::kUsage, builtin);
  raise(cls, message, message, Span(), error_kind_name(ErrorKind::kUsage));
}

}  // namespace

PyObject* error_class(ErrorKind kind, PyObject* builtin) {
  ErrorClasses& c = classes();
  PyObject* own = c.by_kind[kind_index(kind)];
  if (!builtin || PyObject_IsSubclass(own, builtin) == 1) return own;
  auto key = std::make_pair(kind_index(kind), builtin);
  if (auto it = c.combined.find(key); it != c.combined.end()) return it->second;
  // The switchyard kind first, so its name and str() win (KeyError's str()
  // would quote the message); both `except` clauses catch it.
  py::dict body;
  body["__str__"] = py::module_::import("builtins").attr("BaseException").attr("__str__");
  body["__doc__"] = py::str(class_name(own) + " that is also a " + class_name(builtin) + ".");
  std::string qualified = "switchyard." + class_name(own);
  py::tuple bases = py::make_tuple(py::handle(own), py::handle(builtin));
  PyObject* cls = PyErr_NewException(qualified.c_str(), bases.ptr(), body.ptr());
  if (!cls) throw py::error_already_set();
  c.combined.emplace(key, cls);
  return cls;
}

void guard_uninitialized_instances() {
  for (auto& [index, info] : py::detail::get_internals().registered_types_cpp)
    if (info && info->type && std::string(info->type->tp_name).find("_switchyard") != std::string::npos)
      info->operator_new = &refuse_lazy_allocation;
}

void bind_errors(py::module_& m) {
  ErrorClasses& c = classes();
  c.base = PyErr_NewExceptionWithDoc("switchyard.Error",
                                     "A switchyard error: .message, .span (Span or None) and .kind; "
                                     "str() renders the diagnostic.",
                                     PyExc_Exception, nullptr);
  m.attr("Error") = py::handle(c.base);
  struct Entry {
    ErrorKind kind;
    const char* name;
    PyObject* builtin;  // the second base: what the mistake is in Python's terms
    const char* doc;
  };
  const Entry entries[] = {
      {ErrorKind::kParse, "ParseError", PyExc_ValueError, "Malformed text IR or model file (a ValueError)."},
      // An operator applied to operands (or attributes) of the wrong type is
      // what Python calls a TypeError.
      {ErrorKind::kType, "TypeInferenceError", PyExc_TypeError,
       "Type inference failed, or bad operator attributes (a TypeError)."},
      {ErrorKind::kPlacement, "PlacementError", PyExc_ValueError,
       "Device planning: conflicting wishes or missing devices (a ValueError)."},
      {ErrorKind::kInvariant, "InvariantError", PyExc_RuntimeError,
       "The invariant checker found a broken invariant after a pass (a RuntimeError)."},
      {ErrorKind::kPass, "PassError", PyExc_ValueError,
       "A misassembled pipeline: unknown pass name, missing requirement (a ValueError)."},
      {ErrorKind::kBackend, "BackendError", PyExc_RuntimeError,
       "Lowering, code generation or the toolchain failed (a RuntimeError)."},
      {ErrorKind::kRuntime, "RuntimeError", PyExc_RuntimeError, "Loading or running an artifact failed (a RuntimeError)."},
      {ErrorKind::kUsage, "UsageError", PyExc_ValueError,
       "The API was used wrongly: unknown name, bad option, wrong input shape (a ValueError)."},
  };
  for (const Entry& e : entries) {
    std::string qualified = std::string("switchyard.") + e.name;
    py::tuple bases = py::make_tuple(py::handle(c.base), py::handle(e.builtin));
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), e.doc, bases.ptr(), nullptr);
    c.by_kind[kind_index(e.kind)] = cls;
    m.attr(e.name) = py::handle(cls);
  }

  m.def(
      "_error_class",
      [](const std::string& name, py::handle builtin) {
        for (int k = 0; k < 8; ++k)
          if (class_name(classes().by_kind[k]) == name)
            return py::reinterpret_borrow<py::object>(
                error_class(static_cast<ErrorKind>(k), builtin.is_none() ? nullptr : builtin.ptr()));
        throw py::value_error("no error kind " + name);
      },
      py::arg("kind"), py::arg("builtin") = py::none(),
      "The class raised for an error of `kind` (\"UsageError\") that is also `builtin` (TypeError, ...).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      ErrorClasses& cs = classes();
      raise(cs.by_kind[kind_index(e.kind())], e.render(), e.message(), e.span(), error_kind_name(e.kind()));
    } catch (const py::cast_error& e) {
      // A Python value of the wrong kind (or a never-initialized object).
      raise_usage(PyExc_TypeError, e.what());
    } catch (const py::type_error& e) {
      raise_usage(PyExc_TypeError, e.what());
    } catch (const py::value_error& e) {
      raise_usage(PyExc_ValueError, e.what());
    } catch (const py::key_error& e) {
      raise_usage(PyExc_KeyError, e.what());
    } catch (const py::index_error& e) {
      raise_usage(PyExc_IndexError, e.what());
    } catch (const RuntimeError& e) {
      // A path in it may hold any bytes; a Python str holds only UTF-8.
      std::string message = valid_utf8(e.what());
      raise(classes().by_kind[kind_index(ErrorKind::kRuntime)], message, message, Span(),
            error_kind_name(ErrorKind::kRuntime));
    }
  });
}

}  // namespace switchyard::python
