// Reads an ONNX file without copying its weights twice: the file is mapped,
// and before protobuf parses it the initializers' raw_data fields are cut
// out of the byte stream (they are most of a model's bytes). The parsed
// model then refers to each initializer's bytes inside the mapping, and
// so do the constants made from them until something needs their aligned
// data (most are only written to weights.bin).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/onnx/sy_onnx.pb.h"

namespace switchyard {

class MappedFile;

struct OnnxModelFile {
  sy_onnx::ModelProto model;
  // The raw_data of graph.initializer(i), empty when the initializer keeps
  // its data in the message (typed fields, external data or raw_data left in).
  std::vector<std::string_view> initializer_raw_data;
  std::shared_ptr<const MappedFile> mapping;  // keeps the views valid
};

// Throws Error(kUsage) when the file cannot be read, Error(kParse) naming
// `source` when it is not an ONNX model or is truncated.
OnnxModelFile read_onnx_file(const std::string& path);
// The same over bytes in memory (which must outlive the result's views).
OnnxModelFile read_onnx_bytes(std::string_view bytes, const std::string& source);

}  // namespace switchyard
