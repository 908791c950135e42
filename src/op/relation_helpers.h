// Helpers shared by operator type relations.
#pragma once

#include <string>
#include <vector>

#include "ir/type.h"
#include "support/error.h"

namespace switchyard {

// The argument's tensor type, or Error(kType) "argument N of 'op' must be a tensor, got T".
const TensorTypeNode& expect_tensor(const std::vector<Type>& args, size_t index, const std::string& op);
// NumPy broadcasting of two shapes; Error(kType) naming both shapes on mismatch.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                      const std::string& op);
// Normalizes a possibly negative axis for a rank; Error(kType) when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op, const std::string& attr = "axis");
// Error(kType) unless all given dtypes are equal.
void expect_same_dtype(const std::vector<Type>& args, const std::string& op);
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace switchyard
