// build_artifact: the whole compiler, from a module with placement wishes to
// an artifact directory (model.so + weights.bin + manifest.json) the runtime
// loads. Reading build.cc top to bottom is reading the compiler: the IR
// passes, then each lowering stage, each named and timed, with the IR or the
// lowered program printed after any stage asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/compilation_config.h"
#include "ir/module.h"
#include "layout/plan_layouts.h"
#include "pipeline/build_report.h"
#include "placement/placement_rules.h"
#include "placement/plan_devices.h"
#include "toolchain/toolchain.h"

namespace switchyard {

struct BuildOptions {
  CompilationConfig config;
  std::vector<PlacementRule> rules;
  std::optional<LatencyObjective> latency;  // --objective latency --costs FILE
  std::vector<LayoutRule> layout_rules;  // layout pins, applied by PlanLayouts
  // Core sets of CPU devices by name (`--cores cpu:1=2-3`), written to the
  // manifest; a device with one gets as many threads (runtime/core_set.h).
  std::map<std::string, std::vector<int>> device_cores;
  int opt_level = 2;
  // As PassContext's: passes never run, passes run above the opt level, and
  // typed pass configuration.
  std::vector<std::string> disabled_passes, enabled_passes;
  std::map<std::string, AttrValue> pass_config;
  // Where the passes' warnings go (the CLI prints them as they arrive).
  std::shared_ptr<DiagnosticSink> diagnostics = std::make_shared<DiagnosticSink>();
  bool emit_source = false;       // keep the generated C++ in DIR/src/
  bool check_invariants = false;  // run the invariant checker after every pass
  // Verify the lowered program after each lowering stage (lowered_verifier.h):
  // also with check_invariants, in debug builds, and with SY_VERIFY_LOWERED=1
  // in the environment (the test suite sets it).
  bool verify_lowered = false;
  // The stages after which to print the module (an IR pass's name) or the
  // lowered program (a lowering stage's name), or "all"; to `print_to`
  // (default std::cerr). Unknown names are an Error(kUsage) before any work.
  std::set<std::string> print_after;
  std::ostream* print_to = nullptr;
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

// The names --print-after takes: the IR passes in order, then the lowering
// stages that change the lowered program ("lower", "generate-kernels",
// "layouts", "pinned-buffers", "memory-plan").
std::vector<std::string> printable_stages();

// Compiles `mod`'s function @main into the artifact directory `output_dir`,
// written whole or not at all (an older artifact there is replaced). Throws
// Error: kType/kPlacement/kInvariant from the passes, kBackend from lowering
// and the toolchain (with the compiler's message), kUsage when `output_dir`
// holds something other than an artifact.
BuildReport build_artifact(const IRModule& mod, const BuildOptions& options, const std::string& output_dir);

}  // namespace switchyard
