// Bindings of the value-like IR pieces: Span, Target, VirtualDevice,
// CompilationConfig, types (TensorType, TupleType, FuncType) and Attrs.
#include <charconv>

#include "common.h"
#include "ir/compilation_config.h"
#include "ir/layout.h"
#include "ir/span.h"
#include "ir/type.h"
#include "ir/virtual_device.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard::python {

namespace {

DType dtype_arg(py::handle value) {
  std::string name = py::str(value);
  std::optional<DType> dt = parse_dtype(name);
  if (!dt) throw py::value_error("unknown dtype '" + name + "'");
  return *dt;
}

std::vector<int64_t> shape_arg(py::handle value) {
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw py::type_error("shape must be a list or tuple of ints, got " + type_name_of(value));
  std::vector<int64_t> shape;
  for (py::handle d : value) {
    if (!PyLong_Check(d.ptr()) || PyBool_Check(d.ptr()))
      throw py::type_error("shape entries must be ints, got " + type_name_of(d));
    int64_t v = d.cast<int64_t>();
    if (v < 0) throw py::value_error("shape entries must not be negative, got " + std::to_string(v));
    shape.push_back(v);
  }
  return shape;
}

// A TensorType's dimensions: ints, or strings naming a dimension variable
// with an optional bound ("n", "n<=64").
std::vector<DimExpr> dims_arg(py::handle value) {
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw py::type_error("shape must be a list or tuple of ints and variable names, got " + type_name_of(value));
  std::vector<DimExpr> dims;
  for (py::handle d : value) {
    if (!py::isinstance<py::str>(d)) {
      dims.push_back(shape_arg(py::make_tuple(d))[0]);
      continue;
    }
    std::string text = d.cast<std::string>();
    size_t at = text.find("<=");
    std::optional<int64_t> bound;
    if (at != std::string::npos) {
      std::string digits = text.substr(at + 2);
      int64_t v = -1;
      auto result = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (digits.empty() || result.ec != std::errc() || result.ptr != digits.data() + digits.size() || v < 0)
        throw py::value_error("a dimension's bound must be a non-negative integer, got '" + text + "'");
      bound = v;
    }
    dims.push_back(DimExpr(dim_var(text.substr(0, at), bound)));
  }
  return dims;
}

// Ints for constant dimensions, text ("n", "196*n") for symbolic ones.
py::tuple dims_tuple(const std::vector<DimExpr>& dims) {
  py::tuple out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (std::optional<int64_t> value = dims[i].constant()) {
      out[i] = py::int_(*value);
    } else {
      out[i] = py::str(dim_to_string(dims[i]));
    }
  }
  return out;
}

// A line or column: 0 (none) or a 1-based position.
uint32_t position_arg(py::handle value, const char* what) {
  int64_t v = to_int(value, what);
  if (v < 0 || v > int64_t(UINT32_MAX)) throw py::value_error(std::string(what) + " must be 0 to 2^32-1, got " + std::to_string(v));
  return uint32_t(v);
}

using Reference = std::unique_ptr<VirtualDevice, py::nodelete>;
using TargetReference = std::unique_ptr<Target, py::nodelete>;

void bind_span(py::module_& ir) {
  py::class_<Span>(ir, "Span", "Where a node came from: source, line and column (or several fused spans).")
      .def(py::init<>())
      .def(py::init([](py::handle source, py::handle line, py::handle column) {
             return Span(to_str(source, "source"), position_arg(line, "line"), position_arg(column, "column"));
           }),
           py::arg("source"), py::arg("line") = 0, py::arg("column") = 0)
      .def_static(
          "fused", [](py::handle parts) {
            if (!py::isinstance<py::list>(parts) && !py::isinstance<py::tuple>(parts))
              throw py::type_error("parts must be a list of Span, got " + type_name_of(parts));
            std::vector<Span> spans;
            for (py::handle p : parts) spans.push_back(to_span(p, "parts[i]"));
            return Span::fused(spans);
          },
          py::arg("parts"))
      .def_property_readonly("source", [](const Span& s) { return s.defined() ? s.source() : std::string(); })
      .def_property_readonly("line", &Span::line)
      .def_property_readonly("column", &Span::column)
      .def_property_readonly("parts", &Span::parts)
      .def_property_readonly("is_fused", &Span::is_fused)
      .def_property_readonly("defined", &Span::defined)
      .def("__bool__", &Span::defined)
      .def("__str__", &Span::to_string)
      .def("__repr__", [](const Span& s) { return "Span(" + s.to_string() + ")"; })
      .def("__eq__", [](const Span& a, py::handle b) { return py::isinstance<Span>(b) && a == b.cast<Span>(); })
      .def("__hash__", &Span::hash);
}

void bind_target(py::module_& ir) {
  py::class_<Target, TargetReference>(ir, "Target", "A compilation target such as \"cpu\" or \"cuda -arch=sm_90\".")
      .def(py::init([](py::handle text) { return const_cast<Target*>(Target::get(to_str(text, "text"))); }),
           py::arg("text"))
      .def_property_readonly("kind", [](const Target& t) { return device_kind_name(t.kind()); })
      .def_property_readonly("options", &Target::options)
      .def("option", [](const Target& t, py::handle flag) { return t.option(to_str(flag, "flag")); }, py::arg("flag"))
      .def("__str__", &Target::str)
      .def("__repr__", [](const Target& t) { return "Target(\"" + t.str() + "\")"; })
      .def("__eq__", [](const Target& a, py::handle b) { return py::isinstance<Target>(b) && &a == b.cast<const Target*>(); })
      .def("__hash__", [](const Target& t) { return std::hash<const void*>()(&t); });
}

// VirtualDevice(text) or VirtualDevice(kind=, device_id=, target=,
// memory_scope=, layout=), each part checked for its type and value.
VirtualDevice* make_virtual_device(py::handle text, py::handle kind, py::handle device_id, py::handle target,
                                   py::handle memory_scope, py::handle layout) {
  if (!text.is_none()) {
    if (!kind.is_none() || !device_id.is_none() || !target.is_none() || !memory_scope.is_none() || !layout.is_none())
      throw py::type_error("give either the device text or its parts, not both");
    if (!py::isinstance<py::str>(text)) throw py::type_error("text must be a str, got " + type_name_of(text));
    return const_cast<VirtualDevice*>(VirtualDevice::parse(text.cast<std::string>()));
  }
  DeviceKind k = DeviceKind::kUnconstrained;
  if (!kind.is_none()) {
    std::string name = py::str(kind);
    const DeviceKindInfo* info = find_device_kind(name);
    if (!info)
      throw py::value_error("unknown device kind '" + clipped_text(name) + "' (" + device_kind_names(", ") + ")");
    k = info->kind;
  }
  if (!device_id.is_none() && (!PyLong_Check(device_id.ptr()) || PyBool_Check(device_id.ptr())))
    throw py::type_error("device_id must be an int, got " + type_name_of(device_id));
  if (!memory_scope.is_none() && !py::isinstance<py::str>(memory_scope))
    throw py::type_error("memory_scope must be a str, got " + type_name_of(memory_scope));
  if (!layout.is_none() && !py::isinstance<py::str>(layout))
    throw py::type_error("layout must be a str, got " + type_name_of(layout));
  if (!layout.is_none() && !Layout::parse(layout.cast<std::string>()))
    throw py::value_error("layout '" + clipped_text(layout.cast<std::string>()) + "' is not a layout (" +
                          kLayoutSpellings + ")");
  int id = device_id.is_none() ? VirtualDevice::kNoId : device_id.cast<int>();
  const Target* t = nullptr;
  if (py::isinstance<py::str>(target)) t = Target::get(target.cast<std::string>());
  else if (py::isinstance<Target>(target)) t = target.cast<const Target*>();
  else if (!target.is_none()) throw py::type_error("target must be a Target or str, got " + type_name_of(target));
  std::string scope = memory_scope.is_none() ? std::string() : memory_scope.cast<std::string>();
  std::string format = layout.is_none() ? std::string() : layout.cast<std::string>();
  return const_cast<VirtualDevice*>(VirtualDevice::get(k, id, t, scope, format));
}

void bind_virtual_device(py::module_& ir) {
  py::class_<VirtualDevice, Reference>(
      ir, "VirtualDevice",
      "Where a value lives: device kind, id, target, memory scope and layout, each possibly unconstrained. "
      "VirtualDevice(\"cpu:0\"), VirtualDevice(\"cpu\"), or by parts.")
      .def(py::init(&make_virtual_device),
           py::arg("text") = py::none(), py::kw_only(), py::arg("kind") = py::none(), py::arg("device_id") = py::none(),
           py::arg("target") = py::none(), py::arg("memory_scope") = py::none(), py::arg("layout") = py::none())
      .def_static("unconstrained", []() { return const_cast<VirtualDevice*>(VirtualDevice::unconstrained()); },
                  py::return_value_policy::reference)
      .def_property_readonly("kind",
                             [](const VirtualDevice& d) -> py::object {
                               if (d.kind() == DeviceKind::kUnconstrained) return py::none();
                               return py::str(device_kind_name(d.kind()));
                             })
      .def_property_readonly("device_id",
                             [](const VirtualDevice& d) -> py::object {
                               if (d.device_id() == VirtualDevice::kNoId) return py::none();
                               return py::int_(d.device_id());
                             })
      .def_property_readonly("target", [](const VirtualDevice& d) { return const_cast<Target*>(d.target()); },
                             py::return_value_policy::reference)
      .def_property_readonly("memory_scope",
                             [](const VirtualDevice& d) -> py::object {
                               if (d.memory_scope().empty()) return py::none();
                               return py::str(d.memory_scope());
                             })
      .def_property_readonly("layout",
                             [](const VirtualDevice& d) -> py::object {
                               if (d.layout().empty()) return py::none();
                               return py::str(d.layout());
                             })
      .def_property_readonly("is_fully_constrained", &VirtualDevice::is_fully_constrained)
      .def_property_readonly("is_fully_unconstrained", &VirtualDevice::is_fully_unconstrained)
      .def_property_readonly("device_name", &VirtualDevice::device_name)
      .def_static(
          "join",
          [](py::handle a, py::handle b) {
            const VirtualDevice* left = to_virtual_device(a, "a");
            const VirtualDevice* right = to_virtual_device(b, "b");
            return const_cast<VirtualDevice*>(VirtualDevice::join(left ? left : VirtualDevice::unconstrained(),
                                                                  right ? right : VirtualDevice::unconstrained()));
          },
          py::arg("a"), py::arg("b"), py::return_value_policy::reference)
      .def(
          "with_defaults",
          [](const VirtualDevice& d, py::handle defaults) {
            const VirtualDevice* other = to_virtual_device(defaults, "defaults");
            return const_cast<VirtualDevice*>(d.with_defaults(other ? other : VirtualDevice::unconstrained()));
          },
          py::arg("defaults"), py::return_value_policy::reference)
      .def(
          "same_device",
          [](const VirtualDevice& d, py::handle other) {
            const VirtualDevice* o = to_virtual_device(other, "other");
            return d.same_device(o ? o : VirtualDevice::unconstrained());
          },
          py::arg("other"))
      .def("__str__", &VirtualDevice::str)
      .def("__repr__", [](const VirtualDevice& d) {
        return d.is_fully_unconstrained() ? std::string("VirtualDevice()") : "VirtualDevice(" + d.str() + ")";
      })
      .def("__eq__", [](const VirtualDevice& a, py::handle b) {
        return py::isinstance<VirtualDevice>(b) && &a == b.cast<const VirtualDevice*>();
      })
      .def("__hash__", [](const VirtualDevice& d) { return std::hash<const void*>()(&d); });
}

void bind_compilation_config(py::module_& ir) {
  py::class_<CompilationConfig>(ir, "CompilationConfig", "The devices of one build, the default and the host device.")
      .def(py::init([](py::handle devices, py::handle default_device, py::handle host_device) {
             if (!py::isinstance<py::list>(devices) && !py::isinstance<py::tuple>(devices))
               throw py::type_error("devices must be a list of str, got " + type_name_of(devices));
             std::string joined;
             for (py::handle d : devices) joined += (joined.empty() ? "" : ",") + to_str(d, "devices[i]");
             return CompilationConfig::parse(joined, to_str(default_device, "default"), to_str(host_device, "host"));
           }),
           py::arg("devices"), py::arg("default") = "", py::arg("host") = "")
      .def_property_readonly("devices",
                             [](const CompilationConfig& c) {
                               py::list out;
                               for (const VirtualDevice* d : c.devices)
                                 out.append(py::cast(const_cast<VirtualDevice*>(d), py::return_value_policy::reference));
                               return out;
                             })
      .def_property_readonly("default_device", [](const CompilationConfig& c) { return const_cast<VirtualDevice*>(c.default_device); },
                             py::return_value_policy::reference)
      .def_property_readonly("host_device", [](const CompilationConfig& c) { return const_cast<VirtualDevice*>(c.host_device); },
                             py::return_value_policy::reference)
      .def("__str__", &CompilationConfig::to_string);
}

void bind_type_nodes(py::module_& ir) {
  py::class_<TypeNode, Type>(ir, "Type", "Base of TensorType, TupleType and FuncType.")
      .def("__eq__", [](const Type& a, py::handle b) { return py::isinstance<TypeNode>(b) && type_equal(a, b.cast<Type>()); })
      .def("__hash__", [](const Type& t) { return type_hash(t); })
      .def("__str__", [](const Type& t) { return type_to_string(t); })
      .def("__repr__", [](const Type& t) { return type_to_string(t); })
      .def_property_readonly("nbytes", [](const Type& t) { return type_nbytes(t); });

  py::class_<TensorTypeNode, TypeNode, TensorType>(
      ir, "TensorType",
      "A tensor type. A dimension is an int or a variable named by a string with an optional bound, "
      "TensorType(('n<=64', 3), 'float32').")
      .def(py::init([](py::handle shape, py::handle dtype) {
             return tensor_type_of_dims(dims_arg(shape), dtype_arg(dtype));
           }),
           py::arg("shape"), py::arg("dtype") = "float32")
      .def_property_readonly("shape", [](const TensorTypeNode& t) { return dims_tuple(t.dims); },
                             "ints, and strings for symbolic dimensions ('n', '196*n')")
      .def_property_readonly("is_static", &TensorTypeNode::is_static)
      .def_property_readonly("dtype", [](const TensorTypeNode& t) { return dtype_name(t.dtype); })
      .def_property_readonly("ndim", &TensorTypeNode::ndim)
      .def_property_readonly("numel", &TensorTypeNode::numel);

  py::class_<TupleTypeNode, TypeNode, TupleType>(ir, "TupleType", "A tuple of types.")
      .def(py::init([](py::handle fields) { return TupleType(as_tuple(tuple_type(to_type_list(fields, "fields")))); }),
           py::arg("fields"))
      .def_property_readonly("fields", [](const TupleTypeNode& t) { return t.fields; });

  py::class_<FuncTypeNode, TypeNode, FuncType>(ir, "FuncType", "A function type: parameter types and result type.")
      .def(py::init([](py::handle params, py::handle ret) {
             Type r = to_type_or_null(ret, "ret");
             if (!r) throw py::type_error("ret must be a type, got NoneType");
             return FuncType(as_func(func_type(to_type_list(params, "params"), r)));
           }),
           py::arg("params"), py::arg("ret"))
      .def_property_readonly("params", [](const FuncTypeNode& t) { return t.params; })
      .def_property_readonly("ret", [](const FuncTypeNode& t) { return t.ret; });
}

void bind_attrs(py::module_& ir) {
  py::class_<AttrsNode, Attrs>(ir, "Attrs", "Attributes of a call or function: a read-only, name-sorted mapping.")
      .def(py::init([](py::handle mapping) { return make_attrs(to_attr_entries(mapping, "attrs")); }),
           py::arg("mapping") = py::dict())
      .def("__getitem__",
           [](const AttrsNode& a, py::handle key) {
             std::string name = to_str(key, "an attribute name");
             const AttrValue* v = a.find(name);
             if (!v) throw py::key_error(name);
             return attr_value_to_python(*v);
           })
      .def(
          "get",
          [](const AttrsNode& a, py::handle key, py::object fallback) {
            const AttrValue* v = a.find(to_str(key, "name"));
            return v ? attr_value_to_python(*v) : fallback;
          },
          py::arg("name"), py::arg("default") = py::none())
      .def("__contains__", [](const AttrsNode& a, py::handle name) {
        return py::isinstance<py::str>(name) && a.has(name.cast<std::string>());
      })
      .def("__len__", [](const AttrsNode& a) { return a.entries().size(); })
      .def("keys",
           [](const AttrsNode& a) {
             py::list out;
             for (const auto& [k, v] : a.entries()) out.append(k);
             return out;
           })
      .def("values",
           [](const AttrsNode& a) {
             py::list out;
             for (const auto& [k, v] : a.entries()) out.append(attr_value_to_python(v));
             return out;
           })
      .def("items",
           [](const AttrsNode& a) {
             py::list out;
             for (const auto& [k, v] : a.entries()) out.append(py::make_tuple(k, attr_value_to_python(v)));
             return out;
           })
      .def("__iter__",
           [](const AttrsNode& a) {
             py::list keys;
             for (const auto& [k, v] : a.entries()) keys.append(k);
             return py::iter(keys);
           })
      .def("__eq__",
           [](const Attrs& a, py::handle b) {
             if (py::isinstance<AttrsNode>(b)) return attrs_equal(a, b.cast<Attrs>());
             if (py::isinstance<py::dict>(b)) return attrs_equal(a, make_attrs(to_attr_entries(b, "other")));
             return false;
           })
      .def("__hash__", [](const Attrs& a) { return attrs_hash(a); })
      .def("__repr__", [](const AttrsNode& a) {
        std::string out = "{";
        for (const auto& [k, v] : a.entries()) out += (out.size() > 1 ? ", " : "") + k + "=" + attr_value_to_string(v);
        return out + "}";
      });
}

}  // namespace

void bind_types(py::module_& ir) {
  bind_span(ir);
  bind_target(ir);
  bind_virtual_device(ir);
  bind_compilation_config(ir);
  bind_type_nodes(ir);
  bind_attrs(ir);
  ir.def("dtypes", []() {
    std::vector<std::string> out;
    for (DType d : kAllDTypes) out.push_back(dtype_name(d));
    return out;
  });
}

}  // namespace switchyard::python
