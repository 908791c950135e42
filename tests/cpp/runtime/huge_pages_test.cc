// Host buffers: line-aligned when small, 2 MiB-aligned (for huge pages) when large.
#include "runtime/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace switchyard {
namespace huge_pages_test {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(HugePages, SmallBuffersAreLineAlignedAndLargeOnesStartOnAHugePage) {
  constexpr size_t kHugePage = size_t(2) << 20;
  for (size_t bytes : {size_t(0), size_t(1), size_t(100), kHugePage - 1, kHugePage, 5 * kHugePage + 4000}) {
    void* p = allocate_maybe_on_huge_pages(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % (bytes >= kHugePage ? kHugePage : 64), 0u) << bytes;
    // Every byte up to the next line is the caller's.
    size_t usable = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    std::memset(p, 0x5a, usable);
    EXPECT_EQ(static_cast<unsigned char*>(p)[usable - 1], 0x5a) << bytes;
    std::free(p);
  }
}

}  // namespace huge_pages_test
}  // namespace switchyard
