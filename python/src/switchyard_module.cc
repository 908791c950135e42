// The extension module `switchyard._switchyard`: errors, the IR (ir), passes
// (transform), patterns (pattern) and execution (runtime). The pure-Python package re-exports it.
#include "common.h"

PYBIND11_MODULE(_switchyard, m) {
  namespace python = switchyard::python;
  m.doc() = "Switchyard, a device-aware deep-learning compiler (native bindings).";
  pybind11::module_ ir = m.def_submodule("ir", "IR nodes, types, devices, modules and visitors.");
  pybind11::module_ transform = m.def_submodule("transform", "Passes, pass contexts and instruments.");
  pybind11::module_ runtime = m.def_submodule("runtime", "Loading and running compiled artifacts.");
  pybind11::module_ frontend = m.def_submodule("frontend", "Model importers (ONNX).");
  pybind11::module_ pattern = m.def_submodule("pattern", "Dataflow patterns: matching and rewriting.");
  python::bind_errors(m);
  python::bind_types(ir);
  python::bind_nodes(ir);
  python::bind_module(m, ir);
  python::bind_functor(ir);
  python::bind_transform(transform);
  python::bind_runtime(m, runtime);
  python::bind_build(m);
  python::bind_frontend(frontend);
  python::bind_pattern(pattern);
  python::guard_uninitialized_instances();
}
