// The artifact cache's digest of a file's bytes, and a search of the same
// bytes in the same reading: a cold compile of a large model reads the model
// file once to check it did not change and to look for external data, not
// twice.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard {

// XXH3-128 of the regular file's bytes as 32 hex digits; "" when it is
// unreadable. A file over 64 MiB is summed as two halves on two threads
// (reading it from the page cache is most of a cached compile's time): the
// digest is then XXH3-128 of the halves' digests, a function of the bytes
// all the same. With a non-empty `pattern`, `*found` says whether the bytes
// hold it anywhere (false when the file is unreadable).
std::string file_digest(const std::string& path, std::string_view pattern = {}, bool* found = nullptr);

// `count` bytes as lowercase hex, two digits a byte.
std::string hex_digits(const unsigned char* bytes, size_t count);

}  // namespace switchyard
