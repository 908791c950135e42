// LockFile and the staging directory's turn-taking: holders of one lock
// file never overlap, the file goes with the lock, whatever else stood in
// its place is replaced, and a staging directory's owner removes the
// staging directories of dead compiles of its output, never a live one's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "artifact/artifact_writer.h"
#include "artifact/lock_file.h"

namespace switchyard {
namespace lock_file_test {

namespace fs = std::filesystem;

class LockFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("sy_lock_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_)) found.push_back(entry.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  }

  fs::path dir_;
};

TEST_F(LockFileTest, HoldersNeverOverlapAndTheFileGoesWithTheLock) {
  const std::string path = (dir_ / "x.lock").string();
  std::atomic<int> inside{0}, turns{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        LockFile lock(path);
        if (++inside > 1) overlapped = true;
        std::this_thread::yield();
        ++turns;
        --inside;
      }
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(turns.load(), 200);
  EXPECT_FALSE(overlapped.load());
  EXPECT_EQ(names(), std::vector<std::string>{});
}

TEST_F(LockFileTest, ADirectoryWhereTheLockFileBelongsIsReplaced) {
  const fs::path path = dir_ / "x.lock";
  fs::create_directories(path / "inside");
  {
    LockFile lock(path.string());
    EXPECT_TRUE(fs::is_regular_file(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(LockFileTest, StagingRemovesWhatDeadCompilesOfItsOutputLeft) {
  // PIDs are below 2^22 on Linux: 999999999 never runs.
  const std::vector<std::string> dead = {".art.building-999999999-0", ".art.building-999999999-3.old"};
  const std::vector<std::string> kept = {
      ".art.building-" + std::to_string(getpid()) + "-99",  // a live process's
      ".other.building-999999999-0",                         // another output's
      ".art.building-999999999-x",                           // not a staging name
      "art"};
  for (const std::string& name : dead) fs::create_directories(dir_ / name / "inside");
  for (const std::string& name : kept) fs::create_directories(dir_ / name);
  {
    StagingDirectory staging((dir_ / "art").string());
    EXPECT_TRUE(fs::exists(dir_ / ".art.lock"));
    for (const std::string& name : dead) EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  }
  std::vector<std::string> expected = kept;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names(), expected);
}

}  // namespace lock_file_test
}  // namespace switchyard
