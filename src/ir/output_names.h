// The names of a function's outputs: the tensor leaves of its result, in
// order, as the artifact's manifest, the CLI and Python name them. An
// imported model states them in the function attribute `output_names` (an
// ONNX graph's output names); without it they are output_0, output_1, ...
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"

namespace switchyard {

inline constexpr const char* kOutputNamesAttr = "output_names";

// One name per output of `fn`, which has `count` outputs. Throws
// Error(kType) at the function's span when `output_names` is not a list of
// `count` distinct, non-empty strings.
std::vector<std::string> output_names(const Function& fn, size_t count);

// Names an importer can state for outputs named `wanted`: an empty name
// becomes output_<i> (its position), and a name an earlier output already
// has gets _1, _2, ... appended (ONNX may list one value twice).
std::vector<std::string> distinct_output_names(const std::vector<std::string>& wanted);

}  // namespace switchyard
