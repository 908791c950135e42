// The shapes of an ONNX graph's inputs: what the model declares (numbers,
// named dim_params, unknown dimensions) merged with what the user gives
// (--input-shape, from_onnx's shapes), as IR dimensions. A dimension left
// symbolic becomes a dimension variable (ir/dim.h): a dim_param `batch` is
// the variable `batch` in every input that names it, an unnamed one gets a
// fresh name `<input>_d<index>`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/dim.h"

namespace sy_onnx {
class ValueInfoProto;
}

namespace switchyard {

// One dimension as the user gives it: a number fixes it; otherwise it stays
// symbolic, named `name` (empty: the model's own name, or a fresh one), at
// most `bound` when given.
struct InputDim {
  std::optional<int64_t> value;
  std::string name;
  std::optional<int64_t> bound;
  friend bool operator==(const InputDim&, const InputDim&) = default;
};

// "1x3x224x224", "?x3x224x224", "nx3x224x224", "n<=32x3x224x224",
// "?<=32x3x224x224"; the dimensions are separated by 'x', or by ',' when the
// text holds one (for names containing an x: "batch,3,224,224").
// Error(kUsage) naming the text when malformed.
std::vector<InputDim> parse_shape_text(const std::string& text);
// The text form parse_shape_text reads ("n<=32x3").
std::string input_dims_to_string(const std::vector<InputDim>& dims);

// The dimensions of each input (`given[i]` its user shape, or null), so
// that one name is one variable across inputs, with the bound any input
// gives it. Error(kUsage) when a user's shape contradicts the model (rank, a
// number the model fixes) or two inputs bound one name differently;
// Error(kParse) when an input declares no shape and none is given.
std::vector<std::vector<DimExpr>> resolve_input_dims(const std::vector<const sy_onnx::ValueInfoProto*>& inputs,
                                                     const std::vector<const std::vector<InputDim>*>& given,
                                                     const std::string& source);

// A dim_param as a variable name: an identifier (other characters become
// '_', a leading digit gets a '_' before it).
std::string dimension_name(const std::string& dim_param);

}  // namespace switchyard
