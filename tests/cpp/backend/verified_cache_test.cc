// The toolchain's verified caches: an entry is used only when its bytes
// match their recorded SHA-256; a corrupt, truncated or empty object or
// model is rebuilt (never linked) with a note; a failed compile and an
// interrupted one leave no temporary files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/error.h"
#include "toolchain/toolchain.h"
#include "toolchain/verified_cache.h"

namespace switchyard {
namespace verified_cache_test {

namespace fs = std::filesystem;

class VerifiedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("sy_verified_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sources");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void write(const std::string& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  }
  // The names under `sub` that are temporaries being (or left) written.
  std::vector<std::string> temporaries(const std::string& sub) const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_ / sub))
      if (entry.path().filename().string().find(".tmp-") != std::string::npos)
        found.push_back(entry.path().filename().string());
    return found;
  }
  Toolchain toolchain() const { return Toolchain::find("", path("cache")); }
  static TranslationUnit unit(const std::string& name, const std::string& code) {
    return {name, code, {"-O0", "-fPIC"}};
  }

  fs::path dir_;
};

TEST_F(VerifiedCacheTest, AnEntryIsUsedOnlyWhenItsBytesMatchItsHash) {
  std::string entry = path("entry.o"), problem = "stale";
  EXPECT_FALSE(verified_cache_entry(entry, &problem));
  EXPECT_EQ(problem, "");  // absent, not corrupt

  auto store = [&](const std::string& bytes) {
    std::string temporary = cache_temporary_name(entry);
    write(temporary, bytes);
    store_cache_entry(temporary, entry);
    EXPECT_FALSE(fs::exists(temporary));
  };
  store("object bytes");
  EXPECT_TRUE(verified_cache_entry(entry, &problem)) << problem;

  write(entry, "object bytez");  // same size, one byte flipped
  EXPECT_FALSE(verified_cache_entry(entry, &problem));
  EXPECT_EQ(problem, "its content does not match its recorded SHA-256");
  EXPECT_FALSE(fs::exists(entry));  // removed, so it is rebuilt
  EXPECT_FALSE(fs::exists(entry + ".sha256"));

  store("object bytes");
  write(entry, "");
  EXPECT_FALSE(verified_cache_entry(entry, &problem));
  EXPECT_EQ(problem, "it is empty");

  store("object bytes");
  fs::remove(entry + ".sha256");
  EXPECT_FALSE(verified_cache_entry(entry, &problem));
  EXPECT_NE(problem.find("is missing or malformed"), std::string::npos);

  // An empty result is never stored.
  std::string temporary = cache_temporary_name(entry);
  write(temporary, "");
  EXPECT_THROW(store_cache_entry(temporary, entry), Error);
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_FALSE(fs::exists(entry));
}

TEST_F(VerifiedCacheTest, ADirectoryWhereAnEntryBelongsIsRemovedAndTheEntryStored) {
  // A non-empty directory in the entry's and its hash's places: the check
  // removes both, and a store that finds them again replaces them.
  std::string entry = path("entry.o"), problem;
  for (const std::string& place : {entry, entry + ".sha256"}) fs::create_directories(place + "/inside");
  EXPECT_FALSE(verified_cache_entry(entry, &problem));
  EXPECT_FALSE(fs::exists(entry));
  EXPECT_FALSE(fs::exists(entry + ".sha256"));
  for (const std::string& place : {entry, entry + ".sha256"}) fs::create_directories(place + "/inside");
  std::string temporary = cache_temporary_name(entry);
  write(temporary, "object bytes");
  store_cache_entry(temporary, entry);
  EXPECT_TRUE(verified_cache_entry(entry, &problem)) << problem;
}

TEST_F(VerifiedCacheTest, CorruptObjectsAndModelsAreRebuiltNotLinked) {
  Toolchain tools = toolchain();
  std::vector<TranslationUnit> units{unit("one", "extern \"C\" int one() { return 1; }\n"),
                                     unit("two", "extern \"C\" int two() { return 2; }\n")};
  ToolchainStats first;
  std::vector<std::string> objects = tools.compile(units, path("sources"), &first);
  EXPECT_EQ(first.objects_compiled, 2);
  tools.link(objects, path("model.so"), &first);

  // A flipped byte in one object and an emptied other: both rebuilt.
  std::string original;
  {
    std::ifstream in(objects[0], std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string corrupt = original;
  corrupt[corrupt.size() / 2] ^= 0x55;
  write(objects[0], corrupt);
  write(objects[1], "");
  ToolchainStats second;
  EXPECT_EQ(tools.compile(units, path("sources"), &second), objects);
  EXPECT_EQ(second.objects_compiled, 2);
  EXPECT_EQ(second.objects_cached, 0);
  ASSERT_EQ(second.notes.size(), 2u);
  EXPECT_NE(second.notes[0].find("does not match its recorded SHA-256"), std::string::npos) << second.notes[0];
  EXPECT_NE(second.notes[1].find("it is empty"), std::string::npos) << second.notes[1];
  std::string problem;
  EXPECT_TRUE(verified_cache_entry(objects[0], &problem)) << problem;

  // A truncated model in the link cache is relinked, not copied.
  std::string cached_model;
  for (const auto& entry : fs::directory_iterator(path("cache/models")))
    if (entry.path().extension() == ".so") cached_model = entry.path().string();
  ASSERT_FALSE(cached_model.empty());
  fs::resize_file(cached_model, fs::file_size(cached_model) / 2);
  ToolchainStats third;
  tools.link(objects, path("model.so"), &third);
  EXPECT_FALSE(third.link_cached);
  ASSERT_EQ(third.notes.size(), 1u);
  EXPECT_NE(third.notes[0].find("relinked the cached model"), std::string::npos);
  EXPECT_EQ(fs::file_size(path("model.so")), fs::file_size(cached_model));
  EXPECT_TRUE(verified_cache_entry(cached_model, &problem)) << problem;

  ToolchainStats fourth;
  tools.link(objects, path("model.so"), &fourth);
  EXPECT_TRUE(fourth.link_cached);
  EXPECT_TRUE(fourth.notes.empty());
}

TEST_F(VerifiedCacheTest, AFailedCompileLeavesNoTemporaryFiles) {
  Toolchain tools = toolchain();
  ToolchainStats stats;
  EXPECT_THROW(tools.compile({unit("broken", "int broken( { return; }\n"), unit("fine", "int fine() { return 0; }\n")},
                             path("sources"), &stats),
               Error);
  EXPECT_EQ(temporaries("cache/objects"), std::vector<std::string>{});
  EXPECT_EQ(temporaries("cache/models"), std::vector<std::string>{});
}

TEST_F(VerifiedCacheTest, TemporariesOfDeadWritersAreRemoved) {
  toolchain();
  // PIDs are below 2^22 on Linux: 999999999 never runs.
  std::string orphan = path("cache/objects/k.o.tmp-999999999-0");
  std::string recent_orphan = path("cache/objects/k.o.tmp-999999999-1");
  std::string ours = cache_temporary_name(path("cache/objects/k.o"));
  for (const std::string& file : {orphan, recent_orphan, ours}) write(file, "partial");
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(orphan, old);
  fs::last_write_time(ours, old);
  toolchain();
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(recent_orphan));  // its writer may be on another machine sharing the cache
  EXPECT_TRUE(fs::exists(ours));           // this process is still running
}

}  // namespace verified_cache_test
}  // namespace switchyard
