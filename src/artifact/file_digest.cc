// Reading a file in chunks on one or two threads, summing and searching it.
#include "artifact/file_digest.h"

#define XXH_INLINE_ALL
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <optional>
#include <vector>

namespace switchyard {

namespace {

struct RangeRead {
  std::optional<XXH128_hash_t> digest;  // nullopt when a read failed or the file ended early
  bool found = false;
};

// Sums bytes [begin, end) of `fd` read in chunks, and looks for `pattern`
// in them (an occurrence split between two chunks included: the end of
// each chunk stays in front of the next). Chunks, not a mapping: faulting
// in a mapping of ResNet-50's 100 MB took this VM 50-60 ms, reading it from
// the page cache a fraction of that.
RangeRead read_range(int fd, off_t begin, off_t end, std::string_view pattern) {
  constexpr size_t kChunk = 1 << 20;
  const size_t carry = pattern.empty() ? 0 : pattern.size() - 1;
  std::vector<char> buffer(carry + size_t(std::min<off_t>(end - begin, kChunk)));
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  RangeRead result;
  bool ok = true;
  size_t carried = 0;
  for (off_t at = begin; ok && at < end;) {
    ssize_t got = ::pread(fd, buffer.data() + carried, size_t(std::min<off_t>(end - at, kChunk)), at);
    if (got < 0 && errno == EINTR) continue;
    ok = got > 0;
    if (!ok) break;
    XXH3_128bits_update(state, buffer.data() + carried, size_t(got));
    const size_t held = carried + size_t(got);
    if (!pattern.empty() && !result.found)
      result.found = memmem(buffer.data(), held, pattern.data(), pattern.size()) != nullptr;
    carried = std::min(carry, held);
    std::memmove(buffer.data(), buffer.data() + held - carried, carried);
    at += got;
  }
  if (ok) result.digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return result;
}

// Whether `pattern` occurs across byte `middle` of `fd` (starting before it
// and ending after it), which neither half's search sees whole.
bool found_across(int fd, off_t middle, off_t size, std::string_view pattern) {
  if (pattern.size() < 2) return false;
  const off_t begin = std::max<off_t>(0, middle - off_t(pattern.size() - 1));
  const off_t end = std::min<off_t>(size, middle + off_t(pattern.size() - 1));
  std::vector<char> window(size_t(end - begin));
  ssize_t got;
  do got = ::pread(fd, window.data(), window.size(), begin);
  while (got < 0 && errno == EINTR);
  return got > 0 && memmem(window.data(), size_t(got), pattern.data(), pattern.size()) != nullptr;
}

}  // namespace

std::string hex_digits(const unsigned char* bytes, size_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < count; ++i) text += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
  return text;
}

std::string file_digest(const std::string& path, std::string_view pattern, bool* found) {
  constexpr off_t kSplitAbove = off_t(64) << 20;
  if (found) *found = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info {};
  std::optional<XXH128_hash_t> digest;
  bool seen = false;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    if (info.st_size <= kSplitAbove) {
      RangeRead whole = read_range(fd, 0, info.st_size, pattern);
      digest = whole.digest;
      seen = whole.found;
    } else {
      const off_t half = info.st_size / 2;
      std::future<RangeRead> first =
          std::async(std::launch::async, [fd, half, pattern] { return read_range(fd, 0, half, pattern); });
      RangeRead second = read_range(fd, half, info.st_size, pattern);
      RangeRead head = first.get();
      seen = head.found || second.found || found_across(fd, half, info.st_size, pattern);
      if (head.digest && second.digest) {
        XXH128_canonical_t halves[2];
        XXH128_canonicalFromHash(&halves[0], *head.digest);
        XXH128_canonicalFromHash(&halves[1], *second.digest);
        digest = XXH3_128bits(halves, sizeof halves);
      }
    }
  }
  close(fd);
  if (!digest) return "";
  if (found) *found = seen;
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, *digest);
  return hex_digits(canonical.digest, sizeof canonical.digest);
}

}  // namespace switchyard
