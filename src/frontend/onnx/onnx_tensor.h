// ONNX tensors to NDArrays: element types, inline data (raw or typed
// fields) and external data files, which are read only from inside the
// model's own directory.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "frontend/onnx/sy_onnx.pb.h"
#include "runtime/ndarray.h"

namespace switchyard {

// The DType of an ONNX TensorProto.DataType, or nullopt for types Switchyard
// has no dtype for (string, complex, the 8- and 4-bit floats and integers).
std::optional<DType> dtype_from_onnx(int onnx_type);
// "FLOAT", "DOUBLE", ... for messages.
std::string onnx_type_name(int onnx_type);

// The tensor's value. `model_dir` is where external data files are looked
// up. Throws Error(kParse) naming the tensor for an unsupported element type,
// a data field whose size does not match the dims, or external data that is
// missing, too short, or outside the model's directory (an absolute path or
// one with a `..` component).
// `raw_data`, when not empty, holds the tensor's bytes kept outside the
// message (model_reader.h); with `raw_data_owner` (the mapping holding
// them) the array refers to them there and copies them only when its
// aligned data is asked for (NDArray::deferred_copy).
NDArray tensor_from_onnx(const sy_onnx::TensorProto& tensor, const std::string& model_dir,
                         std::string_view raw_data = {}, std::shared_ptr<const void> raw_data_owner = nullptr);

}  // namespace switchyard
