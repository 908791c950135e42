// Paths tests use, fixed at configure time; the build directory (where
// tests write scratch artifacts and their kernel cache) can be moved with
// SY_TEST_BINARY_DIR, for test programs run away from their build
// (scripts/gpu-check.sh on the GPU machine).
#include "support/test_paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace switchyard::testing {

std::string source_dir() { return SY_SOURCE_DIR; }
std::string binary_dir() {
  const char* moved = std::getenv("SY_TEST_BINARY_DIR");
  return moved && *moved ? moved : SY_BINARY_DIR;
}
std::string example_models_dir() { return std::string(SY_SOURCE_DIR) + "/tests/data"; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace switchyard::testing
