// FileWriter: a failed write says why and leaves no partial file; a device
// it was pointed at is never removed.
#include "runtime/file_write.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "hand_model.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace file_write_test {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string write_error(const std::function<void()>& write) {
  try {
    write();
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FileWriter, WritesPiecesAndZeros) {
  std::string path = testing::scratch_dir("file_write") + "/pieces.bin";
  FileWriter out(path);
  out.write("ab", 2);
  out.write_zeros(5000);
  out.write("c", 1);
  out.finish();
  EXPECT_EQ(read(path), "ab" + std::string(5000, '\0') + "c");
  write_whole_file(path, "replaced");
  EXPECT_EQ(read(path), "replaced");
}

TEST(FileWriter, AnUnfinishedFileIsRemoved) {
  std::string path = testing::scratch_dir("file_write") + "/unfinished.bin";
  {
    FileWriter out(path);
    out.write("partial", 7);
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(FileWriter, AFullDeviceSaysSoAndIsNotRemoved) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "this machine has no /dev/full";
  EXPECT_EQ(write_error([] { write_whole_file("/dev/full", "x"); }), "cannot write /dev/full: No space left on device");
  EXPECT_TRUE(fs::exists("/dev/full"));
}

TEST(FileWriter, AMissingDirectoryIsNamed) {
  std::string path = testing::scratch_dir("file_write") + "/missing/file.bin";
  EXPECT_EQ(write_error([&] { write_whole_file(path, "x"); }), "cannot write " + path + ": No such file or directory");
}

}  // namespace file_write_test
}  // namespace switchyard
