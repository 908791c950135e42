// The model loader (see load_model.h).
#include "frontend/load_model.h"

#include <filesystem>

#include "support/error.h"
#include "text/parser.h"

namespace switchyard {

bool is_onnx_file(const std::string& path) { return std::filesystem::path(path).extension() == ".onnx"; }

IRModule load_model_file(const std::string& path, const OnnxImportOptions& onnx) {
  if (is_onnx_file(path)) return import_onnx_file(path, onnx);
  if (!onnx.input_shapes.empty())
    throw Error(ErrorKind::kUsage, "input shapes apply to ONNX models; " + path + " is text IR, whose types state them");
  return parse_file(path);
}

}  // namespace switchyard
