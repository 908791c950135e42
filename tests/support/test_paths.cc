// Paths tests use, fixed at configure time.
#include "support/test_paths.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace switchyard::testing {

std::string source_dir() { return SY_SOURCE_DIR; }
std::string binary_dir() { return SY_BINARY_DIR; }
std::string example_models_dir() { return std::string(SY_SOURCE_DIR) + "/tests/data"; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace switchyard::testing
