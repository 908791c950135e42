// Binding of the whole compiler: build_artifact, from a module with placement
// wishes to an artifact directory, and its BuildReport.
#include "common.h"
#include "pipeline/build.h"
#include "pipeline/build_specialized.h"

namespace switchyard::python {

namespace {

std::vector<std::string> names_of(py::handle value, const std::string& what) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>()};
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw py::type_error(what + " must be a list of str, got " + type_name_of(value));
  for (py::handle item : value) {
    if (py::isinstance<VirtualDevice>(item)) {
      out.push_back(item.cast<const VirtualDevice*>()->str());
    } else if (py::isinstance<py::str>(item)) {
      out.push_back(item.cast<std::string>());
    } else {
      throw py::type_error(what + " entries must be str, got " + type_name_of(item));
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// specialize={"n": [1, 8]}: the dimensions and values of a specialised
// build, in the dict's order (the first outermost, as repeated --specialize).
std::vector<DimValues> dim_values_of(py::handle value) {
  std::vector<DimValues> dims;
  if (value.is_none()) return dims;
  if (!py::isinstance<py::dict>(value))
    throw py::type_error("specialize must be a dict of dimension name -> list of int, got " + type_name_of(value));
  for (auto [name, values] : value.cast<py::dict>()) {
    if (!py::isinstance<py::str>(name))
      throw py::type_error("specialize keys must be dimension names (str), got " + type_name_of(name));
    std::string text = name.cast<std::string>() + "=";
    if (!py::isinstance<py::list>(values) && !py::isinstance<py::tuple>(values))
      throw py::type_error("specialize[" + name.cast<std::string>() + "] must be a list of int, got " +
                           type_name_of(values));
    bool first = true;
    for (py::handle v : values) {
      if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
        throw py::type_error("specialize[" + name.cast<std::string>() + "] entries must be int, got " + type_name_of(v));
      text += (first ? "" : ",") + std::to_string(v.cast<int64_t>());
      first = false;
    }
    dims.push_back(parse_dim_values(text));  // names the flag's text when a value repeats or is negative
  }
  if (dims.empty()) throw py::value_error("specialize={} names no dimension");
  return dims;
}

py::object build(py::handle mod_arg, py::handle devices, py::handle output_arg, py::handle place,
                 py::handle opt_level, py::handle default_device, py::handle host, py::handle check_invariants,
                 py::handle emit_source, py::handle cxx, py::handle cache_dir, py::handle layouts, py::handle costs,
                 py::handle specialize) {
  if (!py::isinstance<IRModule>(mod_arg))
    throw py::type_error("build() takes an IRModule, got " + type_name_of(mod_arg));
  const IRModule& mod = mod_arg.cast<const IRModule&>();
  std::vector<std::string> device_names = names_of(devices, "devices");
  if (device_names.empty()) throw py::value_error("build() needs devices=[\"cpu:0\", ...]");
  std::string output = to_str(output_arg, "output");
  if (output.empty()) throw py::value_error("build() needs output=DIRECTORY");
  BuildOptions options;
  options.config = CompilationConfig::parse(joined(device_names), to_str(default_device, "default"),
                                            to_str(host, "host"));
  for (const std::string& rule : names_of(place, "place"))
    options.rules.push_back(parse_placement_rule(rule, options.config));
  for (const std::string& rule : names_of(layouts, "layouts")) options.layout_rules.push_back(parse_layout_rule(rule));
  // costs=FILE: the latency objective (docs/design.md, "Placement by time").
  if (std::string path = to_str(costs, "costs"); !path.empty()) {
    auto file = std::make_shared<CostFile>(read_cost_file(path));
    check_same_machine(*file, MachineIdentity::this_machine(), path);
    options.latency = LatencyObjective{file, path};
  }
  options.opt_level = to_int32(opt_level, "opt_level");
  // The enclosing PassContext's pass selection, configuration and
  // diagnostics (its opt level and checking arrive as arguments, which may
  // override them).
  const PassContext& enclosing = PassContext::current();
  options.disabled_passes = enclosing.disabled_passes;
  options.enabled_passes = enclosing.enabled_passes;
  options.pass_config = enclosing.config;
  options.diagnostics = enclosing.diagnostics;
  options.check_invariants = to_bool(check_invariants, "check_invariants");
  options.emit_source = to_bool(emit_source, "emit_source");
  options.cxx = to_str(cxx, "cxx");
  options.cache_dir = to_str(cache_dir, "cache_dir");
  std::vector<DimValues> dims = dim_values_of(specialize);
  IRModule own = mod;  // a private copy: the GIL is released while compiling
  if (!dims.empty()) {
    SpecializedBuildReport report;
    {
      py::gil_scoped_release release;
      report = build_specialized_artifact(own, dims, options, output);
    }
    return py::cast(std::move(report));
  }
  BuildReport report;
  {
    py::gil_scoped_release release;
    report = build_artifact(own, options, output);
  }
  return py::cast(std::move(report));
}

}  // namespace

void bind_build(py::module_& m) {
  py::class_<BuildReport>(m, "BuildReport", "What a build did: stages, passes, memory per device, kernels, copies.")
      .def_readonly("output_dir", &BuildReport::output_dir)
      .def_property_readonly("stages",
                             [](const BuildReport& r) {
                               py::list out;
                               for (const BuildStage& s : r.stages) out.append(py::make_tuple(s.name, s.milliseconds));
                               return out;
                             })
      .def_property_readonly("passes",
                             [](const BuildReport& r) {
                               py::list out;
                               for (const auto& p : r.passes) out.append(py::make_tuple(p.pass, p.milliseconds));
                               return out;
                             })
      .def_property_readonly("memory",
                             [](const BuildReport& r) {
                               py::list out;
                               for (const DeviceMemoryReport& d : r.memory)
                                 out.append(py::dict(py::arg("device") = d.device, py::arg("planned_bytes") = d.planned_bytes,
                                                     py::arg("lower_bound_bytes") = d.lower_bound_bytes));
                               return out;
                             })
      .def_readonly("kernel_calls", &BuildReport::kernel_calls)
      .def_readonly("distinct_kernels", &BuildReport::distinct_kernels)
      .def_readonly("primitive_only_kernels", &BuildReport::primitive_only_kernels)
      .def_readonly("notes", &BuildReport::notes)
      .def_readonly("copies", &BuildReport::copies)
      .def_readonly("objects_compiled", &BuildReport::objects_compiled)
      .def_readonly("objects_cached", &BuildReport::objects_cached)
      .def_readonly("link_cached", &BuildReport::link_cached)
      .def_readonly("compiler_invocations", &BuildReport::compiler_invocations)
      .def_property_readonly("total_milliseconds", &BuildReport::total_milliseconds)
      .def("summary", &BuildReport::summary)
      .def("timing_table", &BuildReport::timing_table)
      .def("__repr__", [](const BuildReport& r) { return "BuildReport(" + r.summary() + ")"; });

  py::class_<SpecializedBuildReport>(m, "SpecializedBuildReport",
                                     "What a specialised build did: one BuildReport per program, by its values.")
      .def_readonly("names", &SpecializedBuildReport::names)
      .def_readonly("programs", &SpecializedBuildReport::programs)
      .def_readonly("shared_weights", &SpecializedBuildReport::shared_weights)
      .def_readonly("chunking", &SpecializedBuildReport::chunking,
                    "Per dimension, one line on how runs take values no program was compiled for.")
      .def_readonly("total_milliseconds", &SpecializedBuildReport::total_milliseconds)
      .def("__repr__", [](const SpecializedBuildReport& r) {
        std::string names;
        for (const std::string& n : r.names) names += (names.empty() ? "" : ", ") + n;
        return "SpecializedBuildReport(" + std::to_string(r.names.size()) + " programs: " + names + "; " +
               std::to_string(r.shared_weights) + " sharing one weights.bin)";
      });

  m.def("build", &build, py::arg("mod"), py::arg("devices"), py::arg("output"), py::arg("place"), py::arg("opt_level"),
        py::arg("default"), py::arg("host"), py::arg("check_invariants"), py::arg("emit_source"), py::arg("cxx"),
        py::arg("cache_dir"), py::arg("layouts"), py::arg("costs"), py::arg("specialize"),
        "Compiles @main of a module into an artifact directory.");
}

}  // namespace switchyard::python
