// The ONNX importer: an ONNX model file (opsets 1 to 21, weights inline or
// in external data files beside it) to an IRModule whose function `main`
// takes the graph's inputs as parameters, by their ONNX names, and returns
// its outputs (a tuple when there are several).
//
// Initializers become constants. Everything computable at import (shape
// subgraphs, constant expressions) is folded. A dimension the model leaves
// symbolic (a dim_param, or unknown) and no input shape fixes stays
// symbolic (input_shapes.h); shape subgraphs over it fold to symbolic
// shapes (symbolic_shapes.h), and a converter that cannot take it refuses by
// node. Every node made from an ONNX node has that node's name as its span
// (its op type when it has no name), so placement rules, `explain` and
// errors speak the model's own names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/input_shapes.h"
#include "ir/module.h"

namespace switchyard {

struct OnnxImportOptions {
  // An input's shape (input_shapes.h: numbers fix dimensions, names and
  // bounds keep them symbolic): input name -> dims. Naming an input the
  // model lacks is an error.
  std::map<std::string, std::vector<InputDim>> input_shapes;
  // Constants refer to their bytes inside the mapped file, copied only if
  // their aligned data is needed (most are just written to weights.bin):
  // ResNet-50's import 170-340 ms -> 54-94. Only for a process that
  // compiles at once, as the command line does: a model that outlives the
  // file's content would see a rewritten file's bytes (or SIGBUS on a
  // truncated one), so the Python API copies them.
  bool weights_in_place = false;
  // Where the import adds what it decided that the user should know, one
  // sentence each ("MODEL: note: ..."): inputs naming one dimension two ways
  // that it took as one. The CLI prints them; Python warns.
  std::vector<std::string>* notes = nullptr;
};

// Throws Error(kParse) for a file that is not an ONNX model or is truncated,
// an opset outside 7-21, bad or out-of-directory external data, unsupported
// operators (all of them listed with their node names, in one error), an
// operator version that is not converted (naming the node and the version), an
// input with no declared shape and none given, a converter refusing a
// symbolic dimension (naming the node and the dimension); Error(kUsage) for
// an unreadable file, an input shape naming no input or contradicting the
// model.
IRModule import_onnx_file(const std::string& path, const OnnxImportOptions& options = {});

// The same from the bytes of a model; external data is looked up in `model_dir`.
IRModule import_onnx_bytes(const std::string& bytes, const std::string& source_name, const std::string& model_dir,
                           const OnnxImportOptions& options = {});

}  // namespace switchyard
