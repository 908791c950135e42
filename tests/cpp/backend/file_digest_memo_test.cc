// Remembered file digests: a record is used only for the file it was made
// from, unchanged; a rewrite that keeps the size and puts the modification
// time back is read again (its change time moved), as is a file changed
// too recently to record, and a malformed record.
#include "artifact/file_digest_memo.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "artifact/file_digest.h"

namespace switchyard {
namespace file_digest_memo_test {

namespace fs = std::filesystem;

constexpr std::string_view kPattern = "\n\x08location";

class FileDigestMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("sy_digest_memo_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    path_ = (root_ / "model.bin").string();
    memo_ = (root_ / "digests").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
  }
  // Remembered at once after a change (no settling), as a test may ask.
  RememberedDigest digest(std::string_view pattern = {}) { return remembered_file_digest(memo_, path_, pattern, 0); }
  // Past the file system's timestamp tick, so the next write moves the times.
  static void next_tick() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

  fs::path root_;
  std::string path_, memo_;
};

TEST_F(FileDigestMemoTest, AnUnchangedFileIsRememberedAndARewriteThatKeepsSizeAndTimeIsReadAgain) {
  write(std::string(5000, 'a'));
  next_tick();
  RememberedDigest first = digest();
  EXPECT_FALSE(first.remembered);
  EXPECT_EQ(first.digest, file_digest(path_));
  RememberedDigest second = digest();
  EXPECT_TRUE(second.remembered);
  EXPECT_EQ(second.digest, first.digest);

  struct stat before {};
  ASSERT_EQ(stat(path_.c_str(), &before), 0);
  next_tick();
  write(std::string(4999, 'a') + "b");
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path_.c_str(), times, 0), 0);
  struct stat after {};
  ASSERT_EQ(stat(path_.c_str(), &after), 0);
  ASSERT_EQ(after.st_size, before.st_size);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  RememberedDigest third = digest();
  EXPECT_FALSE(third.remembered);
  EXPECT_EQ(third.digest, file_digest(path_));
  EXPECT_NE(third.digest, first.digest);
}

TEST_F(FileDigestMemoTest, AFileChangedTooRecentlyIsNotRecorded) {
  write("recent");
  EXPECT_FALSE(remembered_file_digest(memo_, path_).remembered);
  RememberedDigest again = remembered_file_digest(memo_, path_);
  EXPECT_FALSE(again.remembered);
  EXPECT_EQ(again.digest, file_digest(path_));
}

TEST_F(FileDigestMemoTest, APatternIsRememberedWithItsOwnRecord) {
  write("head" + std::string(kPattern) + "tail");
  next_tick();
  EXPECT_FALSE(digest().found);
  EXPECT_TRUE(digest().remembered);
  RememberedDigest searched = digest(kPattern);
  EXPECT_FALSE(searched.remembered);  // the record without the pattern says nothing of it
  EXPECT_TRUE(searched.found);
  RememberedDigest again = digest(kPattern);
  EXPECT_TRUE(again.remembered);
  EXPECT_TRUE(again.found);
  EXPECT_EQ(again.digest, file_digest(path_));
}

TEST_F(FileDigestMemoTest, AMalformedRecordIsReadAgain) {
  write("bytes");
  next_tick();
  const std::string expected = digest().digest;
  ASSERT_TRUE(digest().remembered);
  for (const fs::directory_entry& record : fs::directory_iterator(memo_))
    std::ofstream(record.path(), std::ios::trunc) << "switchyard digest record 1\n1 2 3\n";
  RememberedDigest again = digest();
  EXPECT_FALSE(again.remembered);
  EXPECT_EQ(again.digest, expected);
}

TEST_F(FileDigestMemoTest, AnUnreadableFileHasNoDigest) {
  RememberedDigest absent = remembered_file_digest(memo_, path_ + ".absent");
  EXPECT_EQ(absent.digest, "");
  EXPECT_FALSE(absent.remembered);
}

}  // namespace file_digest_memo_test
}  // namespace switchyard
