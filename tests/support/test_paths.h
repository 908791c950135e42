// Paths tests use: the source tree, the build tree and ../shared/examples.
#pragma once

#include <string>

namespace switchyard::testing {

std::string source_dir();          // the repository root
std::string binary_dir();          // the CMake build directory
std::string shared_examples_dir(); // ../shared/examples beside the repository
std::string read_file(const std::string& path);

}  // namespace switchyard::testing
