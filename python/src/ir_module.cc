// Bindings of IRModule, the text format (parse, print) and structural
// equality, hashing and difference reports.
#include "common.h"
#include "ir/span.h"
#include "ir/structural_equal.h"
#include "runtime/clipped_text.h"
#include "support/error.h"
#include "text/parser.h"
#include "text/printer.h"

namespace switchyard::python {

namespace {

PrintOptions print_options(const std::string& devices, bool show_weights) {
  PrintOptions o;
  o.show_weights = show_weights;
  if (devices == "all") o.devices = PrintOptions::Devices::kAll;
  else if (devices == "changed") o.devices = PrintOptions::Devices::kChanged;
  else if (devices == "none") o.devices = PrintOptions::Devices::kNone;
  else throw py::value_error("devices must be 'all', 'changed' or 'none', got '" + clipped_text(devices) + "'");
  return o;
}

IRModule module_from(py::handle functions) {
  IRModule mod;
  if (functions.is_none()) return mod;
  if (!py::isinstance<py::dict>(functions))
    throw py::type_error("IRModule() takes a dict of name -> Function, got " + type_name_of(functions));
  for (auto item : py::reinterpret_borrow<py::dict>(functions)) {
    if (!py::isinstance<py::str>(item.first)) throw py::type_error("function names must be strings");
    std::string name = item.first.cast<std::string>();
    mod.add(name, to_function(item.second, "function @" + name));
  }
  return mod;
}

// The module's function names, in its order.
py::list function_names(const IRModule& m) {
  py::list names;
  for (const auto& [name, function] : m.functions()) names.append(name);
  return names;
}

std::string function_name(py::handle key) {
  if (py::isinstance<GlobalVarNode>(key)) return key.cast<GlobalVar>()->name;
  if (!py::isinstance<py::str>(key)) throw py::type_error("function names are strings, got " + type_name_of(key));
  return key.cast<std::string>();
}

StructuralEqualOptions equal_options(py::handle compare_devices, py::handle compare_spans) {
  return StructuralEqualOptions{.compare_devices = to_bool(compare_devices, "compare_devices"),
                                .compare_spans = to_bool(compare_spans, "compare_spans")};
}

// Both expressions or both modules; TypeError otherwise.
template <typename OnExprs, typename OnModules>
auto on_pair(py::handle lhs, py::handle rhs, OnExprs&& on_exprs, OnModules&& on_modules) {
  if (py::isinstance<IRModule>(lhs) && py::isinstance<IRModule>(rhs))
    return on_modules(lhs.cast<const IRModule&>(), rhs.cast<const IRModule&>());
  if (py::isinstance<IRModule>(lhs) || py::isinstance<IRModule>(rhs))
    throw py::type_error("cannot compare an IRModule with " +
                         type_name_of(py::isinstance<IRModule>(lhs) ? rhs : lhs));
  return on_exprs(to_expr(lhs, "lhs"), to_expr(rhs, "rhs"));
}

void bind_ir_module(py::module_& ir) {
  py::class_<IRModule>(ir, "IRModule", "Named global functions (in definition order) and the build's devices.")
      .def(py::init(&module_from), py::arg("functions") = py::none())
      .def_static(
          "from_expr",
          [](py::handle fn, py::handle name) {
            IRModule mod;
            mod.add(to_str(name, "name"), to_function(fn, "fn"));
            return mod;
          },
          py::arg("fn"), py::arg("name") = "main")
      .def("__getitem__",
           [](const IRModule& m, py::handle key) {
             std::string name = function_name(key);
             const Function* f = m.find(name);
             if (!f) throw py::key_error("the module has no function @" + name);
             return *f;
           })
      .def("__setitem__",
           [](IRModule& m, py::handle key, py::handle fn) { m.add(function_name(key), to_function(fn, "value")); })
      .def("__delitem__",
           [](IRModule& m, py::handle key) {
             std::string name = function_name(key);
             if (!m.contains(name)) throw py::key_error("the module has no function @" + name);
             m.remove(name);
           })
      .def("__contains__",
           [](const IRModule& m, py::handle key) {
             return (py::isinstance<py::str>(key) || py::isinstance<GlobalVarNode>(key)) && m.contains(function_name(key));
           })
      .def("__len__", [](const IRModule& m) { return m.functions().size(); })
      .def("__iter__", [](const IRModule& m) { return py::iter(function_names(m)); })
      .def("keys", &function_names)
      .def("items",
           [](const IRModule& m) {
             py::list out;
             for (const auto& [n, f] : m.functions()) out.append(py::make_tuple(n, f));
             return out;
           })
      .def_property(
          "devices",
          [](const IRModule& m) {
            py::list out;
            for (const VirtualDevice* d : m.devices())
              out.append(py::cast(const_cast<VirtualDevice*>(d), py::return_value_policy::reference));
            return out;
          },
          [](IRModule& m, py::handle devices) {
            std::vector<const VirtualDevice*> out;
            for (py::handle d : devices) {
              const VirtualDevice* vd = to_virtual_device(d, "devices[i]");
              if (!vd || !vd->is_fully_constrained())
                throw py::value_error("module devices must be fully constrained devices such as \"cpu:0\"");
              out.push_back(vd);
            }
            m.set_devices(std::move(out));
          })
      .def_property("device_planned", &IRModule::device_planned, &IRModule::set_device_planned)
      .def("copy", [](const IRModule& m) { return m; })
      .def(
          "astext",
          [](const IRModule& m, py::handle devices, py::handle show_weights) {
            return print_module(m, print_options(to_str(devices, "devices"), to_bool(show_weights, "show_weights")));
          },
          py::arg("devices") = "all", py::kw_only(), py::arg("show_weights") = false,
          "The text IR; devices: 'all', 'changed' or 'none'. Constants over 16 elements are elided as "
          "meta[Constant][i] (the text does not parse back) unless show_weights=True.")
      .def("__str__", [](const IRModule& m) { return print_module(m, {.show_weights = false}); })
      .def("__repr__", [](const IRModule& m) {
        std::string names;
        for (const auto& [n, f] : m.functions()) names += (names.empty() ? "@" : ", @") + n;
        return "IRModule(" + names + ")";
      });
}

}  // namespace

void bind_module(py::module_& m, py::module_& ir) {
  bind_ir_module(ir);

  m.def(
      "parse_text",
      [](py::handle text_arg, py::handle source_arg) {
        std::string text = to_str(text_arg, "text"), source_name = to_str(source_arg, "source_name");
        register_source_text(source_name, text);
        return parse_module(text, source_name);
      },
      py::arg("text"), py::arg("source_name") = "<string>", "Parses text IR; spans name source_name.");
  m.def(
      "parse_file", [](py::handle path) { return parse_file(to_str(path, "path")); }, py::arg("path"),
      "Reads and parses a text IR file.");

  ir.def(
      "structural_equal",
      [](py::handle lhs, py::handle rhs, py::handle compare_devices, py::handle compare_spans) {
        StructuralEqualOptions o = equal_options(compare_devices, compare_spans);
        return on_pair(
            lhs, rhs, [&](const Expr& a, const Expr& b) { return structural_equal(a, b, o); },
            [&](const IRModule& a, const IRModule& b) { return structural_equal(a, b, o); });
      },
      py::arg("lhs"), py::arg("rhs"), py::kw_only(), py::arg("compare_devices") = true, py::arg("compare_spans") = false,
      "Whether two expressions (or modules) are equal up to renaming of bound variables; devices are compared "
      "unless turned off, spans only with compare_spans=True.");
  ir.def(
      "structural_diff",
      [](py::handle lhs, py::handle rhs, py::handle compare_devices, py::handle compare_spans) {
        StructuralEqualOptions o = equal_options(compare_devices, compare_spans);
        return on_pair(
            lhs, rhs, [&](const Expr& a, const Expr& b) { return structural_diff(a, b, o); },
            [&](const IRModule& a, const IRModule& b) { return structural_diff(a, b, o); });
      },
      py::arg("lhs"), py::arg("rhs"), py::kw_only(), py::arg("compare_devices") = true, py::arg("compare_spans") = false,
      "None when equal, otherwise a report of the first difference.");
  ir.def(
      "structural_hash",
      [](py::handle value, py::handle compare_devices, py::handle compare_spans) {
        StructuralEqualOptions o = equal_options(compare_devices, compare_spans);
        if (py::isinstance<IRModule>(value)) {
          size_t h = 0;
          for (const auto& [name, fn] : value.cast<const IRModule&>().functions())
            h = h * 1000003u ^ (std::hash<std::string>()(name) + structural_hash(fn, o));
          return h;
        }
        return structural_hash(to_expr(value, "value"), o);
      },
      py::arg("value"), py::kw_only(), py::arg("compare_devices") = true, py::arg("compare_spans") = false,
      "A hash consistent with structural_equal under the same options.");
}

}  // namespace switchyard::python
