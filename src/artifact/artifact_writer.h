// Writing an artifact directory: the manifest of a lowered and planned
// program, weights.bin, and a staging directory that becomes the artifact
// only when everything in it is complete.
#pragma once

#include <string>

#include "artifact/lock_file.h"
#include "ir/compilation_config.h"
#include "lower/lower.h"
#include "lower/memory_plan.h"
#include "runtime/manifest.h"
#include "targets/code_generators.h"

namespace switchyard {

// The version written into manifests.
constexpr const char* kSwitchyardVersion = "0.1.0";

// Everything but the hashes: devices (the config's, in order), inputs,
// outputs, weights (laid out by layout_weights), arenas (in plan order),
// kernels (one per call, in program order) and copies.
Manifest make_manifest(const LoweredProgram& program, const MemoryPlan& plan, const CompilationConfig& config);

// Marks the weights of `manifest` (make_manifest's) that each device kind's
// code generator stores prepared, lays the weights out again and returns
// who prepares each.
WeightPreparers mark_prepared_weights(const LoweredProgram& program, Manifest& manifest,
                                      const CompilationConfig& config);

// Writes weights.bin as `manifest` lays it out (weights in program order),
// each weight with a preparer in its primitive's layout; returns its
// checksum (weights_checksum of the format written, manifest.h).
std::string write_weights_file(const LoweredProgram& program, const Manifest& manifest,
                               const WeightPreparers& preparers, const std::string& path);

// A fresh directory beside `output_dir` (".OUT.building-PID-N"); removed on
// destruction unless committed. commit() puts it in place of `output_dir`,
// replacing an older artifact there (a directory holding manifest.json, or
// an empty one) and refusing to replace anything else.
//
// Compiles into one output directory take turns: a StagingDirectory holds
// the lock file ".OUT.lock" beside it from construction to destruction, so
// the last one to take the lock commits last and its artifact stays whole,
// and whatever it keeps from its staging directory (the artifact cache)
// is its own. Holding the lock, it removes the staging directories that
// killed compiles of `output_dir` left (those whose process is gone).
class StagingDirectory {
 public:
  explicit StagingDirectory(const std::string& output_dir);
  ~StagingDirectory();
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  const std::string& path() const { return path_; }
  void commit();

 private:
  std::string output_dir_;
  LockFile lock_;  // declared before path_: released after the directory goes
  std::string path_;
  bool committed_ = false;
};

// Error(kUsage) unless `output_dir` is absent, an empty directory or an artifact.
void check_replaceable(const std::string& output_dir);

}  // namespace switchyard
