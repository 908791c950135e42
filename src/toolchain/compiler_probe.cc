#include "toolchain/compiler_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "runtime/file_write.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "toolchain/verified_cache.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

// Between the two answers in a cache entry; neither contains a NUL byte.
constexpr char kSeparator = '\0';

// The file `cxx` runs, as run_process finds it (a name without '/' is looked
// up in PATH), with links resolved; "" when there is none.
std::string resolved_executable(const std::string& cxx) {
  std::error_code error;
  if (cxx.find('/') != std::string::npos) {
    fs::path path = fs::canonical(cxx, error);
    return error ? "" : path.string();
  }
  const char* search = std::getenv("PATH");
  std::istringstream dirs(search ? search : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + cxx;
    if (access(candidate.c_str(), X_OK) != 0) continue;
    fs::path path = fs::canonical(candidate, error);
    return error ? "" : path.string();
  }
  return "";
}

// The lines of the first processor in /proc/cpuinfo that name the CPU and
// its features: -march=native depends on nothing else.
std::string cpu_identity() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string identity;
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();)
    for (const char* field : {"vendor_id", "cpu family", "model", "stepping", "flags", "Features", "CPU part"})
      if (line.rfind(field, 0) == 0) identity += line + "\n";
  return identity;
}

// The cache entry for this compiler binary on this CPU; "" when the
// compiler's file cannot be found (then nothing is kept).
std::string cache_entry_path(const std::string& cxx, const std::vector<std::string>& target_help,
                             const std::string& cache_dir) {
  std::string identity = compiler_identity(cxx);
  if (identity.empty()) return "";
  std::string key = identity + command_line(target_help) + "\n";
  return cache_dir + "/compilers/" + sha256_hex(key.data(), key.size()) + ".txt";
}

bool read_cached(const std::string& path, CompilerAnswers* answers) {
  std::string problem;
  if (!verified_cache_entry(path, &problem)) return false;
  std::ifstream file(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t separator = text.find(kSeparator);
  if (file.bad() || separator == std::string::npos) return false;
  answers->version = {true, 0, text.substr(0, separator)};
  answers->native_target = text.substr(separator + 1);
  return true;
}

// A cache that cannot be written costs the next compile the two questions, nothing more.
void keep(const std::string& path, const CompilerAnswers& answers) {
  try {
    std::error_code ignored;
    fs::create_directories(fs::path(path).parent_path(), ignored);
    std::string temporary = cache_temporary_name(path);
    write_whole_file(temporary, answers.version.output + kSeparator + answers.native_target);
    store_cache_entry(temporary, path);
  } catch (const std::exception&) {
  }
}

}  // namespace

std::string compiler_identity(const std::string& cxx) {
  std::string executable = resolved_executable(cxx);
  struct stat info {};
  if (executable.empty() || stat(executable.c_str(), &info) != 0) return "";
  return executable + "\n" + std::to_string(info.st_size) + "\n" + std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec) + "\n" + cpu_identity();
}

CompilerAnswers ask_compiler(const std::string& cxx, const std::vector<std::string>& target_help,
                             const std::string& cache_dir) {
  std::string entry = cache_entry_path(cxx, target_help, cache_dir);
  CompilerAnswers answers;
  if (!entry.empty() && read_cached(entry, &answers)) return answers;
  std::future<ProcessResult> native = std::async(std::launch::async, [&] { return run_process(target_help); });
  answers.version = run_process({cxx, "--version"});
  ProcessResult target = native.get();
  answers.native_target = target.started && target.exit_code == 0 ? target.output : "";
  if (!entry.empty() && answers.version.started && answers.version.exit_code == 0) keep(entry, answers);
  return answers;
}

}  // namespace switchyard
