// Fuzz target: the ONNX importer over the bytes of a model (external data
// is looked up in a directory that does not exist, so only inline weights
// load). A model either imports to a module that type-checks, or is refused
// with an Error naming the file and node.
#include "frontend/onnx/onnx_importer.h"
#include "fuzz_target.h"
#include "transform/infer_type_pass.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  return fuzz::run_one([&] {
    IRModule mod = import_onnx_bytes(bytes, "fuzz.onnx", "/nonexistent-fuzz-model-dir");
    InferType()(mod, PassContext());
  });
}
