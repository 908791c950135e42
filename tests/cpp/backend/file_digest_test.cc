// The artifact cache's file digest and the search made in the same reading:
// the digest is XXH3-128 of the bytes (of the two halves' digests above
// 64 MiB) whether or not a pattern is looked for, and a pattern is found
// wherever it lies: inside a chunk, across two chunks, across the halves,
// at either end.
#define XXH_INLINE_ALL
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>

#include "artifact/file_digest.h"

namespace switchyard {
namespace file_digest_test {

namespace fs = std::filesystem;

constexpr std::string_view kPattern = "\n\x08location";

std::string canonical_hex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  return hex_digits(canonical.digest, sizeof canonical.digest);
}

class FileDigestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::path(::testing::TempDir()) / ("sy_file_digest_" + std::to_string(::getpid()))).string();
  }
  void TearDown() override { fs::remove(path_); }

  // Writes `bytes` with the pattern at `at` (none when npos); returns the bytes.
  std::string write(size_t size, size_t at) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = char('a' + i % 23);
    if (at != std::string::npos) bytes.replace(at, kPattern.size(), kPattern);
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
    return bytes;
  }
  // Whether file_digest finds the pattern; checks its digest against `bytes`'.
  bool found_in(const std::string& bytes) {
    bool found = true;
    std::string digest = file_digest(path_, kPattern, &found);
    EXPECT_EQ(digest, file_digest(path_));  // the search changes no digest
    std::string expected;
    if (bytes.size() <= (size_t(64) << 20)) {
      expected = canonical_hex(XXH3_128bits(bytes.data(), bytes.size()));
    } else {
      const size_t half = bytes.size() / 2;
      XXH128_canonical_t halves[2];
      XXH128_canonicalFromHash(&halves[0], XXH3_128bits(bytes.data(), half));
      XXH128_canonicalFromHash(&halves[1], XXH3_128bits(bytes.data() + half, bytes.size() - half));
      expected = canonical_hex(XXH3_128bits(halves, sizeof halves));
    }
    EXPECT_EQ(digest, expected);
    return found;
  }

  std::string path_;
};

TEST_F(FileDigestTest, APatternIsFoundWhereverItLiesInASmallFile) {
  constexpr size_t kChunk = 1 << 20, kSize = 3 * kChunk + 100;
  EXPECT_FALSE(found_in(write(kSize, std::string::npos)));
  for (size_t at : {size_t(0), size_t(5000), kChunk - 3, 2 * kChunk - 1, kSize - kPattern.size()})
    EXPECT_TRUE(found_in(write(kSize, at))) << "at " << at;
}

TEST_F(FileDigestTest, APatternIsFoundAcrossTheHalvesOfALargeFile) {
  constexpr size_t kSize = (size_t(64) << 20) + 4098;
  const size_t half = kSize / 2;
  EXPECT_FALSE(found_in(write(kSize, std::string::npos)));
  for (size_t at : {size_t(0), half - 4, half - 1, half, half + (1 << 20) - 2, kSize - kPattern.size()})
    EXPECT_TRUE(found_in(write(kSize, at))) << "at " << at;
}

TEST_F(FileDigestTest, AnUnreadableFileHasNoDigestAndNoFind) {
  bool found = true;
  EXPECT_EQ(file_digest(path_ + ".absent", kPattern, &found), "");
  EXPECT_FALSE(found);
}

}  // namespace file_digest_test
}  // namespace switchyard
