// Paths tests use: the source tree, the build tree and the example models in tests/data.
#pragma once

#include <string>

namespace switchyard::testing {

std::string source_dir();          // the repository root
std::string binary_dir();          // the CMake build directory, or $SY_TEST_BINARY_DIR
std::string example_models_dir();  // tests/data: the project's own copies of the shared examples
std::string read_file(const std::string& path);

}  // namespace switchyard::testing
