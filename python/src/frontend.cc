// Bindings of the model importers: sy.frontend.from_onnx and the table of
// ONNX operator versions it converts.
#include <pybind11/stl.h>

#include "common.h"
#include "frontend/onnx/converters.h"
#include "frontend/onnx/onnx_importer.h"

namespace switchyard::python {

namespace py = pybind11;

void bind_frontend(py::module_& frontend) {
  frontend.def(
      "from_onnx",
      [](const std::string& path, const std::map<std::string, std::string>& shapes) {
        OnnxImportOptions options;
        // Python's () is a scalar's shape; the command line has no empty form.
        for (const auto& [name, text] : shapes)
          options.input_shapes[name] = text.empty() ? std::vector<InputDim>{} : parse_shape_text(text);
        std::vector<std::string> notes;
        options.notes = &notes;
        IRModule mod;
        {
          py::gil_scoped_release release;
          mod = import_onnx_file(path, options);
        }
        for (const std::string& note : notes)
          if (PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0) throw py::error_already_set();
        return mod;
      },
      py::arg("path"), py::arg("shapes") = std::map<std::string, std::string>{},
      "Imports an ONNX model file into an IRModule.");
  frontend.def(
      "onnx_operators",
      [] {
        py::dict table;
        for (const OnnxOperatorSupport& op : onnx_operator_support()) {
          py::dict versions;
          for (const auto& [version, refusal] : op.versions)
            versions[py::int_(version)] = refusal.empty() ? py::object(py::none()) : py::object(py::str(refusal));
          table[py::str(op.op_type)] = versions;
        }
        return table;
      },
      "{op_type: {version: None when converted, else why not}} for every ONNX operator the importer knows.");
  frontend.attr("ONNX_OPSETS") = py::make_tuple(kOldestOnnxOpset, kNewestOnnxOpset);
}

}  // namespace switchyard::python
