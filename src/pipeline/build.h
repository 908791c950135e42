// build_artifact: the whole compiler, from a module with placement wishes to
// an artifact directory (model.so + weights.bin + manifest.json) the runtime
// loads. Reading build.cc top to bottom is reading the compiler.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/toolchain.h"
#include "backend/plan_layouts.h"
#include "device/placement_rules.h"
#include "ir/attrs.h"
#include "ir/compilation_config.h"
#include "ir/module.h"
#include "transform/instruments.h"

namespace switchyard {

struct BuildReport;

struct BuildOptions {
  CompilationConfig config;
  std::vector<PlacementRule> rules;
  std::vector<LayoutRule> layout_rules;  // layout pins, applied by PlanLayouts
  int opt_level = 2;
  // As PassContext's: passes never run, passes run above the opt level, and
  // typed pass configuration.
  std::vector<std::string> disabled_passes, enabled_passes;
  std::map<std::string, AttrValue> pass_config;
  // Where the passes' warnings go (the CLI prints them as they arrive).
  std::shared_ptr<DiagnosticSink> diagnostics = std::make_shared<DiagnosticSink>();
  bool emit_source = false;       // keep the generated C++ in DIR/src/
  bool check_invariants = false;  // run the invariant checker after every pass
  std::string cxx = "";           // default: $SY_CXX, else the system c++
  std::string cache_dir = "";     // default: $XDG_CACHE_HOME/switchyard or ~/.cache/switchyard
  // The toolchain, when a caller is already finding it on another thread
  // (the command line starts that before it reads the model: asking a new
  // compiler its version and target is ~20 ms of a cold compile); else
  // build_artifact finds `cxx` in `cache_dir` itself.
  std::shared_future<Toolchain> toolchain;
  // Called with the finished artifact in its staging directory and the
  // report, just before the artifact is put in place, while compiles into
  // the same output directory wait (the command line's artifact cache keeps
  // the artifact from there, so what it keeps is this build's own).
  std::function<void(const std::string& staging_dir, const BuildReport& report)> before_commit;
};

struct BuildStage {
  std::string name;
  double milliseconds = 0;
};

struct DeviceMemoryReport {
  std::string device;                // "cpu:0"
  uint64_t planned_bytes = 0;        // its arenas' total size
  uint64_t lower_bound_bytes = 0;    // the most bytes live at once
};

struct BuildReport {
  std::string output_dir;
  std::vector<BuildStage> stages;                 // in pipeline order
  std::vector<TimingInstrument::Entry> passes;    // each pass of the pipeline stage
  std::vector<DeviceMemoryReport> memory;         // per device of the build
  int kernel_calls = 0;
  int distinct_kernels = 0;
  int primitive_only_kernels = 0;  // distinct kernels that are a oneDNN primitive alone: no code to compile
  int copies = 0;
  int objects_compiled = 0;      // translation units compiled
  int objects_cached = 0;        // translation units found in the object cache
  bool link_cached = false;      // model.so reused from the cache
  int compiler_invocations = 0;  // compiles plus links that ran
  std::vector<std::string> notes;  // what the build repaired on its way (a corrupt cache entry rebuilt)

  double total_milliseconds() const;
  // One line: kernels, copies, memory per device, compiles; and the same
  // but for the compiles (what the artifact holds).
  std::string summary() const;
  std::string model_summary() const;
  // A table of stage and pass times.
  std::string timing_table() const;
};

// Compiles `mod`'s function @main into the artifact directory `output_dir`,
// written whole or not at all (an older artifact there is replaced). Throws
// Error: kType/kPlacement/kInvariant from the passes, kBackend from lowering
// and the toolchain (with the compiler's message), kUsage when `output_dir`
// holds something other than an artifact.
BuildReport build_artifact(const IRModule& mod, const BuildOptions& options, const std::string& output_dir);

}  // namespace switchyard
