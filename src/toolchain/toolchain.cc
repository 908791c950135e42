// Compiler discovery, the content-addressed object and library caches, and
// parallel compilation.
#include "toolchain/toolchain.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "runtime/file_write.h"
#include "runtime/runtime_error.h"
#include "runtime/sha256.h"
#include "support/error.h"
#include "runtime/cpu_feature_names.h"
#include "toolchain/compiler_probe.h"
#include "toolchain/model_abi_text.h"
#include "toolchain/process.h"
#include "toolchain/unit_batches.h"
#include "toolchain/verified_cache.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

constexpr int kParallelCompiles = 2;
constexpr size_t kMostMessageChars = 6000;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string default_cache_dir() {
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/switchyard";
  if (std::string home = environment("HOME"); !home.empty()) return home + "/.cache/switchyard";
  return "/tmp/switchyard-cache-" + std::to_string(getuid());
}

// A backend error saying why the file could not be written; no partial file stays.
void write_source_file(const std::string& path, std::string_view text) {
  try {
    write_whole_file(path, text);
  } catch (const RuntimeError& e) {
    throw Error(ErrorKind::kBackend, e.what());
  }
}

void make_directory(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) throw Error(ErrorKind::kBackend, "cannot create directory " + path + ": " + error.message());
}

std::string hash_text(const std::string& text) { return sha256_hex(text.data(), text.size()); }

std::string trimmed(const std::string& output) {
  return output.size() <= kMostMessageChars ? output
                                            : output.substr(0, kMostMessageChars) + "\n[... compiler output cut]";
}

// The embedded model ABI header as cache_dir/include/HASH/switchyard/model_abi.h
// (a verified cache entry, written once per header version); returns the
// directory to pass with -I.
std::string install_abi_header(const std::string& cache_dir, const std::string& hash) {
  std::string include_dir = cache_dir + "/include/" + hash;
  std::string header = include_dir + "/switchyard/model_abi.h";
  std::string ignored;
  if (verified_cache_entry(header, &ignored)) return include_dir;
  make_directory(include_dir + "/switchyard");
  std::string temporary = cache_temporary_name(header);
  write_source_file(temporary, model_abi_header_text());
  store_cache_entry(temporary, header);
  return include_dir;
}

// The compiler's resolved -march=native (GCC reports it; others may not) and
// the feature flags of /proc/cpuinfo's first processor.
// `native_target`: the compiler's -Q --help=target for -march=native, empty
// when it has none.
std::string describe_native_cpu(const std::string& native_target) {
  std::string description;
  {
    std::istringstream lines(native_target);
    for (std::string line; std::getline(lines, line);)
      if (line.find("-march=") != std::string::npos) {
        description += "march:" + line.substr(line.find_last_of(" \t") + 1) + "\n";
        break;
      }
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) {
      description += line + "\n";
      break;
    }
  return description;
}

}  // namespace

std::string Toolchain::compiler_name(const std::string& cxx) {
  return !cxx.empty() ? cxx : !environment("SY_CXX").empty() ? environment("SY_CXX") : "c++";
}

std::string Toolchain::default_cache_directory() { return default_cache_dir(); }

Toolchain Toolchain::find(const std::string& cxx, const std::string& cache_dir) {
  Toolchain t;
  t.cxx_ = compiler_name(cxx);
  t.cache_dir_ = cache_dir.empty() ? default_cache_dir() : cache_dir;
  CompilerAnswers answers = ask_compiler(t.cxx_, t.target_help_command(""), t.cache_dir_);
  const ProcessResult& version = answers.version;
  if (!version.started)
    throw Error(ErrorKind::kBackend, "cannot run the C++ compiler '" + t.cxx_ + "' (" + version.output +
                                         "); install one or name it with SY_CXX");
  if (version.exit_code != 0)
    throw Error(ErrorKind::kBackend, "the C++ compiler '" + t.cxx_ + "' failed to report its version (exit " +
                                         std::to_string(version.exit_code) + "):\n" + trimmed(version.output));
  t.version_ = version.output;
  t.native_target_ = answers.native_target;
  t.native_cpu_ = describe_native_cpu(t.native_target_);
  for (const char* sub : {"objects", "models", "failed"}) make_directory(t.cache_dir_ + "/" + sub);
  std::string_view abi = model_abi_header_text();
  t.abi_header_hash_ = sha256_hex(abi.data(), abi.size());
  t.include_dir_ = install_abi_header(t.cache_dir_, t.abi_header_hash_);
  for (const char* sub : {"objects", "models", "compilers"}) remove_orphaned_temporaries(t.cache_dir_ + "/" + sub);
  return t;
}

std::vector<std::string> Toolchain::cpu_flags(const std::string& mcpu) {
  // GCC and Clang spell "this CPU model" -march on x86 and -mcpu elsewhere.
#if defined(__x86_64__) || defined(__i386__)
  const char* cpu_flag = "-march=";
#else
  const char* cpu_flag = "-mcpu=";
#endif
  // Generated loops are `omp simd` loops that call std::sqrt and friends: they
  // vectorise only with -fopenmp-simd and without errno; and without trapping
  // math, under which GCC will not turn a floating-point condition (NaN
  // checks, sy_erf's two ranges) into a select (docs/design.md). Neither
  // changes a result. -ffp-contract=off keeps each multiply and add rounded
  // as the interpreter rounds it (GCC fuses a * b + c by default, even under
  // -std=c++20); the math polynomials ask for their fused steps by name.
  std::vector<std::string> flags = {"-O3", cpu_flag + (mcpu.empty() ? std::string("native") : mcpu), "-fPIC",
                                    "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"};
#if defined(__x86_64__) || defined(__i386__)
  // GCC's tuning for every Intel AVX-512 server (Skylake-SP to Sapphire
  // Rapids) prefers 256-bit vectors, sparing the clock a 512-bit instruction
  // costs there, and for Zen 1 (which splits 256-bit operations) 128-bit
  // ones; oneDNN's kernels in the same run use the widest registers anyway,
  // so the generated loops would only run at half (or a quarter) of the
  // width the CPU has. The widest the target's instruction set allows, as on
  // Zen 2 to 4, where GCC prefers none.
  flags.push_back("-mprefer-vector-width=512");
#endif
  return flags;
}

std::vector<std::string> Toolchain::target_help_command(const std::string& mcpu) const {
  std::vector<std::string> command{cxx_};
  for (const std::string& flag : cpu_flags(mcpu))
    if (flag.rfind("-march=", 0) == 0 || flag.rfind("-mcpu=", 0) == 0) command.push_back(flag);
  command.insert(command.end(), {"-Q", "--help=target"});
  return command;
}

std::string Toolchain::target_help(const std::string& mcpu) const {
  ProcessResult target = run_process(target_help_command(mcpu));
  return target.started && target.exit_code == 0 ? target.output : "";
}

std::vector<std::string> Toolchain::cpu_features(const std::string& mcpu) const {
  std::string output = mcpu.empty() ? native_target_ : target_help(mcpu);
  // GCC reports its target; a compiler that does not leaves the artifact unchecked.
  if (output.empty()) return {};
  // Lines such as "  -mavx2    [enabled]".
  std::vector<std::string> features;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string option, state;
    words >> option >> state;
    if (state == "[enabled]" && option.rfind("-m", 0) == 0 && is_known_cpu_feature(option.substr(2)))
      features.push_back(option.substr(2));
  }
  return features;
}

// One compiler process: a unit alone, or a batch of joinable ones.
struct Toolchain::CompileJob {
  std::vector<std::string> command;
  std::string source_path, object_path;
  std::string what;  // for messages: "NAME.cc", or the members' files
  size_t units = 1;
  size_t source_bytes = 0;
};

std::vector<std::string> Toolchain::compile(const std::vector<TranslationUnit>& units, const std::string& source_dir,
                                            ToolchainStats* stats) const {
  for (const TranslationUnit& unit : units) write_source_file(source_dir + "/" + unit.name + ".cc", unit.code);
  std::vector<std::string> objects;
  std::vector<CompileJob> jobs;
  for (const std::vector<size_t>& batch : plan_unit_batches(units, kParallelCompiles)) {
    CompileJob job = compile_job(units, batch, source_dir);
    objects.push_back(job.object_path);
    std::string problem;
    if (verified_cache_entry(job.object_path, &problem)) {
      stats->objects_cached += int(job.units);
      continue;
    }
    if (!problem.empty()) stats->notes.push_back("rebuilt the cached object " + job.object_path + ": " + problem);
    jobs.push_back(std::move(job));
  }
  // The longest sources first, so the compilers end about together.
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const CompileJob& a, const CompileJob& b) { return a.source_bytes > b.source_bytes; });

  // Compile two at a time; after the first failure no new compile starts.
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::string failure;
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure.empty()) return;
      }
      std::string message = run_compile_job(jobs[i]);
      if (message.empty()) continue;
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (failure.empty()) failure = message;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kParallelCompiles && size_t(t) < jobs.size(); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  for (const CompileJob& job : jobs) stats->objects_compiled += int(job.units);
  stats->compiler_invocations += int(jobs.size());
  if (!failure.empty()) throw Error(ErrorKind::kBackend, failure);
  return objects;
}

Toolchain::CompileJob Toolchain::compile_job(const std::vector<TranslationUnit>& units,
                                             const std::vector<size_t>& batch, const std::string& source_dir) const {
  const TranslationUnit& first = units[batch.front()];
  CompileJob job;
  job.units = batch.size();
  std::string code;
  if (batch.size() == 1) {
    code = first.code;
    job.source_path = source_dir + "/" + first.name + ".cc";
    job.what = first.name + ".cc";
  } else {
    code = batch_source(units, batch);
    make_directory(source_dir + "/batches");
    job.source_path = source_dir + "/batches/sy_batch_" + hash_text(code).substr(0, 16) + ".cc";
    write_source_file(job.source_path, code);
    for (size_t u : batch) job.what += (job.what.empty() ? "" : ", ") + units[u].name + ".cc";
    job.what += " (compiled as one)";
  }
  job.source_bytes = code.size();
  std::vector<std::string> options{"-std=c++20"};
  options.insert(options.end(), first.flags.begin(), first.flags.end());
  // The include directory is named by the header's hash, which the key holds.
  std::string key_text = code + "\n--\n" + command_line(options) + "\n--\n" + version_ + "\n--\n" + "model_abi.h " +
                         abi_header_hash_ + "\n--\n" + native_cpu_;
  options.insert(options.end(), {"-I", include_dir_});
  job.object_path = cache_dir_ + "/objects/" + hash_text(key_text) + ".o";
  job.command = {cxx_};
  job.command.insert(job.command.end(), options.begin(), options.end());
  job.command.insert(job.command.end(), {"-c", job.source_path, "-o", job.object_path});
  return job;
}

std::string Toolchain::run_compile_job(const CompileJob& job) const {
  std::string temporary = cache_temporary_name(job.object_path);
  std::vector<std::string> command = job.command;
  command.back() = temporary;
  ProcessResult result = run_process(command);
  if (result.started && result.exit_code == 0) {
    try {
      store_cache_entry(temporary, job.object_path);
      return "";
    } catch (const Error& e) {
      result.output += "\n" + e.message();
    }
  }
  std::error_code ignored;
  fs::remove(temporary, ignored);
  std::string kept = cache_dir_ + "/failed/" + fs::path(job.source_path).filename().string();
  fs::copy_file(job.source_path, kept, fs::copy_options::overwrite_existing, ignored);
  return "compiling the generated " + job.what + " failed (" +
         (result.started ? "exit " + std::to_string(result.exit_code) : "not started: " + result.output) + "):\n" +
         trimmed(result.output) + "\ncommand: " + command_line(command) + "\nthe source is kept at " + kept;
}

void Toolchain::link(const std::vector<std::string>& objects, const std::string& output, ToolchainStats* stats) const {
  // Generated code links nothing: oneDNN's primitives run in the runtime.
  std::vector<std::string> libraries;
  // Objects are named by their content, so their names identify the library.
  std::string key_text = cxx_ + "\n" + version_ + "\n" + command_line(libraries);
  for (const std::string& o : objects) key_text.append("\n").append(fs::path(o).filename().string());
  std::string cached = cache_dir_ + "/models/" + hash_text(key_text) + ".so";
  std::string problem;
  if (verified_cache_entry(cached, &problem)) {
    stats->link_cached = true;
  } else {
    if (!problem.empty()) stats->notes.push_back("relinked the cached model " + cached + ": " + problem);
    std::string temporary = cache_temporary_name(cached);
    std::vector<std::string> command{cxx_, "-shared", "-o", temporary};
    command.insert(command.end(), objects.begin(), objects.end());
    command.insert(command.end(), libraries.begin(), libraries.end());
    ProcessResult result = run_process(command);
    ++stats->compiler_invocations;
    if (!result.started || result.exit_code != 0) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw Error(ErrorKind::kBackend, "linking model.so failed:\n" + trimmed(result.output) +
                                           "\ncommand: " + command_line(command));
    }
    store_cache_entry(temporary, cached);
  }
  std::error_code error;
  fs::copy_file(cached, output, fs::copy_options::overwrite_existing, error);
  if (error) throw Error(ErrorKind::kBackend, "cannot write " + output + ": " + error.message());
}

}  // namespace switchyard
