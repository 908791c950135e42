// What the C++ compiler says of itself (--version) and of this machine's CPU
// (-march=native -Q --help=target), asked once per compiler binary and CPU:
// the two questions cost 20-110 ms a compile on the project's machines,
// a fifth of a cached compile.
#pragma once

#include <string>
#include <vector>

#include "toolchain/process.h"

namespace switchyard {

struct CompilerAnswers {
  ProcessResult version;      // `CXX --version`
  std::string native_target;  // the target-help command's output, "" when it fails (a compiler that is not GCC)
};

// The compiler binary `cxx` runs (its resolved path, size and modification
// time) and this CPU's identity in /proc/cpuinfo, as text for cache keys;
// "" when the binary cannot be found.
std::string compiler_identity(const std::string& cxx);

// Asks both questions at once (two processes), or reads the answers from
// cache_dir/compilers/, where they are kept (verified_cache.h) under a key
// of compiler_identity(cxx). Answers are kept only from a compiler
// that reported its version. `target_help` is the full command line.
CompilerAnswers ask_compiler(const std::string& cxx, const std::vector<std::string>& target_help,
                             const std::string& cache_dir);

}  // namespace switchyard
