// The matrix products' attributes (nn.dense, matmul, nn.batch_matmul) as
// one typed struct, read in one place and checked once when the call is
// built (the registry's check_attrs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attrs.h"

namespace switchyard {

struct LinearAttrs {
  // nn.batch_matmul's: x is (B, K, M) rather than (B, M, K); y is (B, N, K)
  // rather than (B, K, N). nn.dense's weight is always (N, K) and matmul
  // transposes nothing; theirs stay false.
  bool transpose_a = false, transpose_b = false;
  std::optional<int64_t> units;  // nn.dense's N, when stated
};

LinearAttrs linear_attrs(const AttrsNode& attrs);
// units, when stated, must be positive.
void check_linear_attrs(const std::string& op, const LinearAttrs& attrs);
// The attributes of an nn.batch_matmul call with these values (for make_op_call).
std::vector<std::pair<std::string, AttrValue>> attr_entries(const LinearAttrs& attrs);

}  // namespace switchyard
