// Overflow-checked tensor sizes (see tensor_size.h).
#include "runtime/tensor_size.h"

#include <unistd.h>

#include <cstdio>
#include <limits>

namespace switchyard {

std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return std::nullopt;
  return count;
}

std::optional<int64_t> checked_nbytes(const std::vector<int64_t>& shape, DType dtype) {
  std::optional<int64_t> count = checked_numel(shape);
  int64_t bytes = 0;
  if (!count || __builtin_mul_overflow(*count, int64_t(dtype_bytes(dtype)), &bytes)) return std::nullopt;
  return bytes;
}

int64_t physical_memory_bytes() {
  // Asked once: every array allocation compares against it.
  static const int64_t memory = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    int64_t bytes = 0;
    if (pages <= 0 || page_size <= 0 || __builtin_mul_overflow(int64_t(pages), int64_t(page_size), &bytes))
      return std::numeric_limits<int64_t>::max();
    return bytes;
  }();
  return memory;
}

std::string byte_count_text(int64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes < 1024) return text;
  double scaled = double(bytes);
  int unit = -1;
  while (scaled >= 1024 && unit < 5) scaled /= 1024, ++unit;
  char rounded[32];
  std::snprintf(rounded, sizeof rounded, " (%.1f %s)", scaled, kUnits[unit]);
  return text + rounded;
}

}  // namespace switchyard
