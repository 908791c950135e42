// Conversion of Python values to IR pieces (expressions, types, devices,
// spans, attributes, arrays) and back. Every failure is a Python TypeError or
// ValueError naming the argument; nothing here lets a null node through.
#include <pybind11/numpy.h>

#include <cstring>

#include "common.h"
#include "ir/attrs.h"
#include "op/registry.h"

namespace switchyard::python {

std::string type_name_of(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

bool is_sequence(py::handle value) {
  return (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value));
}

[[noreturn]] void wrong_type(const std::string& what, const std::string& expected, py::handle value) {
  throw py::type_error(what + " must be " + expected + ", got " + type_name_of(value));
}

std::string to_str(py::handle value, const std::string& what) {
  if (!py::isinstance<py::str>(value)) wrong_type(what, "a str", value);
  return value.cast<std::string>();
}

bool to_bool(py::handle value, const std::string& what) {
  if (!PyBool_Check(value.ptr())) {
    py::object numpy = py::module_::import("numpy");
    if (!py::isinstance(value, numpy.attr("bool_"))) wrong_type(what, "a bool", value);
  }
  return value.cast<bool>();
}

int64_t to_int(py::handle value, const std::string& what) {
  // An index (a Python or NumPy integer), never a float or a bool.
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) wrong_type(what, "an int", value);
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(what + ": " + std::string(py::str(index)) + " does not fit in 64 bits");
  return v;
}

int to_int32(py::handle value, const std::string& what) {
  int64_t v = to_int(value, what);
  if (v < INT32_MIN || v > INT32_MAX) throw py::value_error(what + ": " + std::to_string(v) + " is out of range");
  return int(v);
}

Expr to_expr(py::handle value, const std::string& what) { return to_node<Expr, ExprNode>(value, what, "an Expr"); }

std::vector<Expr> to_expr_list(py::handle value, const std::string& what) {
  return to_list<Expr>(value, what, "a list of Expr", to_expr);
}

Var to_var(py::handle value, const std::string& what) { return to_node<Var, VarNode>(value, what, "a Var"); }

std::vector<Var> to_var_list(py::handle value, const std::string& what) {
  return to_list<Var>(value, what, "a list of Var", to_var);
}

Function to_function(py::handle value, const std::string& what) {
  return to_node<Function, FunctionNode>(value, what, "a Function");
}

Type to_type_or_null(py::handle value, const std::string& what) {
  if (value.is_none()) return Type();
  if (py::isinstance<TypeNode>(value)) return value.cast<Type>();
  wrong_type(what, "a type (TensorType, TupleType, FuncType) or None", value);
}

namespace {

Type to_type(py::handle value, const std::string& what) {
  Type t = to_type_or_null(value, what);
  if (!t) wrong_type(what, "a type", value);
  return t;
}

}  // namespace

std::vector<Type> to_type_list(py::handle value, const std::string& what) {
  return to_list<Type>(value, what, "a list of types", to_type);
}

const VirtualDevice* to_virtual_device(py::handle value, const std::string& what) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::str>(value)) return VirtualDevice::parse(value.cast<std::string>());
  if (py::isinstance<VirtualDevice>(value)) return value.cast<const VirtualDevice*>();
  wrong_type(what, "a VirtualDevice, a device string such as \"cpu:0\", or None", value);
}

Span to_span(py::handle value, const std::string& what) {
  if (value.is_none()) return Span();
  if (py::isinstance<Span>(value)) return value.cast<Span>();
  wrong_type(what, "a Span or None", value);
}

py::object span_or_none(const Span& span) {
  if (!span.defined()) return py::none();
  return py::cast(span);
}

namespace {

bool is_numpy_scalar(py::handle value) {
  py::object numpy = py::module_::import("numpy");
  return py::isinstance(value, numpy.attr("generic"));
}

int64_t to_int64(py::handle value, const std::string& what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(what + ": integer " + std::string(py::str(value)) + " does not fit in 64 bits");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// A list of strs (a function's output names).
AttrValue to_string_list(py::handle value, const std::string& what) {
  std::vector<std::string> out;
  for (py::handle item : value) {
    if (!py::isinstance<py::str>(item)) wrong_type(what + "[" + std::to_string(out.size()) + "]", "a str", item);
    out.push_back(item.cast<std::string>());
  }
  return out;
}

}  // namespace

AttrValue to_attr_value(py::handle value, const std::string& what) {
  if (value.is_none()) return std::monostate{};
  if (PyBool_Check(value.ptr())) return value.cast<bool>();
  if (PyLong_Check(value.ptr())) return to_int64(value, what);
  if (PyFloat_Check(value.ptr())) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<VirtualDevice>(value)) return value.cast<const VirtualDevice*>()->str();
  if (is_numpy_scalar(value)) return to_attr_value(value.attr("item")(), what);
  py::object numpy = py::module_::import("numpy");
  if (py::isinstance(value, numpy.attr("ndarray"))) return to_attr_value(value.attr("tolist")(), what);
  if (is_sequence(value)) {
    if (py::len(value) > 0 && py::isinstance<py::str>(value[py::int_(0)])) return to_string_list(value, what);
    std::vector<py::object> items;
    bool any_float = false;
    size_t i = 0;
    for (py::handle item : value) {
      py::object plain = is_numpy_scalar(item) ? item.attr("item")() : py::reinterpret_borrow<py::object>(item);
      std::string item_what = what + "[" + std::to_string(i++) + "]";
      if (PyFloat_Check(plain.ptr())) {
        any_float = true;
      } else if (!PyLong_Check(plain.ptr()) || PyBool_Check(plain.ptr())) {
        wrong_type(item_what, "an int or a float", plain);
      }
      items.push_back(plain);
    }
    if (any_float) {
      std::vector<double> out;
      for (const py::object& item : items) out.push_back(item.cast<double>());
      return out;
    }
    std::vector<int64_t> out;
    for (size_t k = 0; k < items.size(); ++k) out.push_back(to_int64(items[k], what + "[" + std::to_string(k) + "]"));
    return out;
  }
  wrong_type(what, "None, a bool, an int, a float, a str, a list of numbers or a list of strs", value);
}

std::vector<std::pair<std::string, AttrValue>> to_attr_entries(py::handle mapping, const std::string& what) {
  std::vector<std::pair<std::string, AttrValue>> out;
  if (mapping.is_none()) return out;
  if (py::isinstance<AttrsNode>(mapping)) return mapping.cast<const AttrsNode&>().entries();
  if (!py::hasattr(mapping, "items")) wrong_type(what, "a dict of attributes", mapping);
  for (py::handle item : mapping.attr("items")()) {
    py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
    if (pair.size() != 2 || !py::isinstance<py::str>(pair[0]))
      throw py::type_error(what + ": attribute names must be strings");
    std::string name = pair[0].cast<std::string>();
    out.emplace_back(name, to_attr_value(pair[1], what + "['" + name + "']"));
  }
  return out;
}

py::object attr_value_to_python(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else {
          return py::cast(v);
        }
      },
      value);
}

Attrs call_attrs(const Expr& op, py::handle mapping) {
  std::vector<std::pair<std::string, AttrValue>> entries = to_attr_entries(mapping, "attrs");
  if (const OpNode* o = as<OpNode>(op); o && o->def) return normalize_attrs(*o->def, std::move(entries));
  if (mapping.is_none()) return Attrs();
  return make_attrs(std::move(entries));
}

// The DType of a native-order NumPy dtype, by kind and item size.
std::optional<DType> dtype_of_numpy(py::handle numpy_dtype) {
  std::string kind = py::str(numpy_dtype.attr("kind"));
  int itemsize = numpy_dtype.attr("itemsize").cast<int>();
  if (kind == "b" && itemsize == 1) return DType::kBool;
  if (kind != "f" && kind != "i" && kind != "u") return std::nullopt;
  // NumPy's names are ours ("float64", "uint16", ...), except bfloat16's.
  std::string name = py::str(numpy_dtype.attr("name"));
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype || *dtype == DType::kBFloat16 || dtype_bytes(*dtype) != itemsize) return std::nullopt;
  return dtype;
}

namespace {

// NumPy's names are ours, except that it has no bfloat16: widened to float32.
const char* numpy_name_of(DType dtype) { return dtype == DType::kBFloat16 ? "float32" : dtype_name(dtype); }

}  // namespace

NDArray ndarray_from_python(py::handle value, const std::string& what) {
  py::object numpy = py::module_::import("numpy");
  if (!py::isinstance(value, numpy.attr("ndarray")) && !is_numpy_scalar(value))
    wrong_type(what, "a NumPy array", value);
  // ascontiguousarray makes a 0-d array (or a NumPy scalar) 1-d: keep its shape.
  py::object array = numpy.attr("ascontiguousarray")(value).attr("reshape")(numpy.attr("shape")(value));
  py::object dtype = array.attr("dtype");
  if (!dtype.attr("isnative").cast<bool>()) {
    array = array.attr("astype")(dtype.attr("newbyteorder")("="));
    dtype = array.attr("dtype");
  }
  std::optional<DType> dt = dtype_of_numpy(dtype);
  if (!dt)
    throw py::type_error(what + ": NumPy dtype " + std::string(py::str(dtype)) +
                         " is not supported (float32, float64, float16, int8, int16, int32, int64, uint8, uint16, "
                         "uint32, uint64, bool)");
  std::vector<int64_t> shape;
  for (py::handle d : array.attr("shape")) shape.push_back(d.cast<int64_t>());
  NDArray out(*dt, shape);
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(array).request();
  if (out.nbytes() > 0) std::memcpy(out.data(), info.ptr, out.nbytes());
  return out;
}

py::object ndarray_to_numpy(const NDArray& array) {
  py::object numpy = py::module_::import("numpy");
  py::tuple shape(array.shape().size());
  for (size_t i = 0; i < array.shape().size(); ++i) shape[i] = py::int_(array.shape()[i]);
  py::object out = numpy.attr("empty")(shape, numpy.attr("dtype")(numpy_name_of(array.dtype())));
  if (array.numel() == 0 || !array.defined()) return out;
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(out).request(true);
  if (array.dtype() == DType::kBFloat16) {
    auto* dst = static_cast<float*>(info.ptr);
    const auto* src = array.as<uint16_t>();
    for (int64_t i = 0; i < array.numel(); ++i) dst[i] = bfloat16_to_float(src[i]);
  } else {
    std::memcpy(info.ptr, array.data(), array.nbytes());
  }
  return out;
}

}  // namespace switchyard::python
