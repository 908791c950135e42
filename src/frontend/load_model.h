// The one loader every command and the Python API use: a text-IR file
// (.sy) is parsed, an ONNX file (.onnx) imported.
#pragma once

#include <string>

#include "frontend/onnx/onnx_importer.h"
#include "ir/module.h"

namespace switchyard {

// Whether the path names an ONNX model (by its .onnx extension).
bool is_onnx_file(const std::string& path);

// Parses or imports the file. `onnx` applies to ONNX files only; fixing
// input shapes of a text-IR file is an Error(kUsage).
IRModule load_model_file(const std::string& path, const OnnxImportOptions& onnx = {});

}  // namespace switchyard
