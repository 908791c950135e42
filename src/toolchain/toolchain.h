// The system C++ compiler as the backend's toolchain: compiling generated
// translation units in parallel into a content-addressed object cache, and
// linking model.so (also cached), so an unchanged kernel is never compiled
// twice and an unchanged model is never linked twice.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace switchyard {

struct TranslationUnit {
  std::string name;                // file stem, e.g. "nn_dense_4f1c..." -> NAME.cc
  std::string code;                // the complete source
  std::vector<std::string> flags;  // code-generation flags, e.g. {"-O3", "-march=native"}
  // Whether the code still compiles after other joinable units' code in one
  // file: its names at namespace scope are its own, or guarded where shared
  // (a kernel's, cpu_unit.cc). Such units with equal flags share compiler
  // processes (unit_batches.h).
  bool joinable = false;
};

struct ToolchainStats {
  int objects_compiled = 0;  // translation units the compiler built
  int objects_cached = 0;    // translation units found in the cache
  bool link_cached = false;  // model.so taken from the cache
  int compiler_invocations = 0;  // compiles and links that ran
  // One line per cache entry that failed its hash check and was rebuilt.
  std::vector<std::string> notes;
};

class Toolchain {
 public:
  // `cxx` "" means $SY_CXX, else "c++"; `cache_dir` "" means
  // $XDG_CACHE_HOME/switchyard, else ~/.cache/switchyard. Asks the compiler
  // its version and what -march=native means here (compiler_probe.h: once
  // per compiler and CPU); Error(kBackend) when it cannot be run.
  static Toolchain find(const std::string& cxx, const std::string& cache_dir);
  // The compiler `find` would run for `cxx`, and the cache directory for "".
  static std::string compiler_name(const std::string& cxx);
  static std::string default_cache_directory();

  const std::string& compiler() const { return cxx_; }
  const std::string& cache_dir() const { return cache_dir_; }
  // The directory generated code is compiled with (-I): it holds
  // switchyard/model_abi.h, written from the copy embedded in the compiler.
  const std::string& include_dir() const { return include_dir_; }
  // What -march=native resolves to on this machine, part of every cache key.
  const std::string& native_cpu() const { return native_cpu_; }

  // The flags of a CPU target: -O3 -march=native -fPIC -fopenmp-simd
  // -fno-math-errno -fno-trapping-math -ffp-contract=off, with the target's
  // -mcpu option in place of "native".
  static std::vector<std::string> cpu_flags(const std::string& mcpu);
  // The instruction-set extensions (targets/cpu/runtime/cpu_features.h) that code
  // compiled with cpu_flags(mcpu) may use, as the compiler reports them
  // (GCC does; for a compiler that does not, none).
  std::vector<std::string> cpu_features(const std::string& mcpu) const;

  // Writes each unit to source_dir/NAME.cc and compiles it (two at a time),
  // joinable units in batches (unit_batches.h: source_dir/batches/*.cc),
  // unless the cache holds the object of the unit or batch, keyed by the
  // SHA-256 of its source (a batch's holds every member's code), the command
  // line, the compiler's version, the model ABI header's hash and
  // what -march=native resolves to here, and
  // verified by the SHA-256 of its content (verified_cache.h): a corrupt
  // entry is rebuilt, with a line in stats->notes. Stats count units.
  // Returns the objects to link, one per unit or batch, in the order of
  // their first units. A failed compile is Error(kBackend) with the
  // compiler's message and the path of a kept copy of the source.
  std::vector<std::string> compile(const std::vector<TranslationUnit>& units, const std::string& source_dir,
                                   ToolchainStats* stats) const;

  // Links the objects into the shared library `output`, through a cache
  // verified the same way.
  void link(const std::vector<std::string>& objects, const std::string& output, ToolchainStats* stats) const;

 private:
  std::string cxx_;
  std::string version_;
  std::string cache_dir_;
  // The embedded switchyard/model_abi.h is written under the cache, in a
  // directory named by its SHA-256, which is part of every cache key.
  std::string include_dir_;
  std::string abi_header_hash_;
  // What -march=native means on this machine (the compiler's resolved CPU
  // and the CPU's feature flags), part of every cache key: a cache shared
  // by machines with different CPUs must not hand one the other's objects.
  std::string native_cpu_;
  // The compiler's `-march=native -Q --help=target`, asked once: the cache
  // key and the native build's CPU features both read it.
  std::string native_target_;
  // Its -Q --help=target for the CPU model `mcpu` ("": native), empty when
  // it has none (not GCC), and the command that asks it.
  std::string target_help(const std::string& mcpu) const;
  // Compiling one unit, or a batch of units, through the object cache.
  struct CompileJob;
  CompileJob compile_job(const std::vector<TranslationUnit>& units, const std::vector<size_t>& batch,
                         const std::string& source_dir) const;
  // "" when it compiled, else the message of its failure.
  std::string run_compile_job(const CompileJob& job) const;
  std::vector<std::string> target_help_command(const std::string& mcpu) const;
};

}  // namespace switchyard
