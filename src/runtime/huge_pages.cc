#include "runtime/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>

namespace switchyard {

void* allocate_maybe_on_huge_pages(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  // Rounded to lines only: a tail short of 2 MiB stays on small pages
  // rather than costing up to 2 MiB more each.
  size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, rounded) != 0) return nullptr;
  if (alignment == kHugePage) madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

}  // namespace switchyard
