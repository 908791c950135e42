// What a build reports: each stage's time, each pass's, memory per device,
// kernels, copies and compiles; as a summary line and a timing table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transform/instruments.h"

namespace switchyard {

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
  std::vector<TimingInstrument::Entry> passes;    // each pass of the "passes" stage
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

}  // namespace switchyard
