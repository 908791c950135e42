// Bindings of the model importers: sy.frontend.from_onnx.
#include <pybind11/stl.h>

#include "common.h"
#include "frontend/onnx/onnx_importer.h"

namespace switchyard::python {

namespace py = pybind11;

void bind_frontend(py::module_& frontend) {
  frontend.def(
      "from_onnx",
      [](const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
        OnnxImportOptions options;
        options.input_shapes = shapes;
        py::gil_scoped_release release;
        return import_onnx_file(path, options);
      },
      py::arg("path"), py::arg("shapes") = std::map<std::string, std::vector<int64_t>>{},
      "Imports an ONNX model file into an IRModule.");
}

}  // namespace switchyard::python
