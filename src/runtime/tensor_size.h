// Element counts and byte sizes of dense tensors, computed without overflow.
// Every layer that turns a shape read from a file into a count or an
// allocation goes through these, so a shape can never wrap to a small size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dtype.h"

namespace switchyard {

// The product of the dimensions; nullopt when one is negative or the
// product does not fit in int64.
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape);
// numel * dtype_bytes; nullopt under the same conditions.
std::optional<int64_t> checked_nbytes(const std::vector<int64_t>& shape, DType dtype);

// This machine's physical memory in bytes: the most one buffer may need
// before allocating it is refused as absurd rather than tried (a zero-filled
// buffer larger than memory would bring the machine down, not fail).
int64_t physical_memory_bytes();

// A byte count for messages: exact, then rounded to a binary unit
// ("1099511627776 bytes (1.0 TiB)").
std::string byte_count_text(int64_t bytes);

}  // namespace switchyard
