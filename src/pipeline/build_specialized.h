// build_specialized_artifact: one artifact holding a compiled program per
// combination of values of a symbolic model's dimension variables
// (`switchyard compile --specialize n=1,8`), which the runtime picks from by
// the shapes of each run's inputs (runtime/specialized_manifest.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "pipeline/build.h"

namespace switchyard {

// A dimension variable and the values to compile it for ("n=1,8,32").
struct DimValues {
  std::string name;
  std::vector<int64_t> values;
};

// "n=1,8,32" parsed; Error(kUsage) naming the flag's text when it is not NAME=V1,V2,...
// with distinct non-negative values.
DimValues parse_dim_values(const std::string& text);

struct SpecializedBuildReport {
  std::vector<std::string> names;     // "n=1", in program order
  std::vector<BuildReport> programs;  // one build per program
  int shared_weights = 0;             // programs reading the one top-level weights.bin
  std::vector<std::string> chunking;  // per dimension, how runs take other values (chunking_text)
  double total_milliseconds = 0;
};

// Compiles `mod` (whose @main has symbolic parameters) once per element of
// the cross product of `dims` (the first dimension outermost), each by
// specialize() then build_artifact with `options`, one after another so the
// later ones find the earlier ones' kernels in the object cache, into
// subdirectories of `output_dir` named after the values ("n=8",
// "n=4,s=16"); writes weights.bin once at the top for every program whose
// weights.bin came out the same as the first's, and manifest.json listing
// the programs. Written whole or not at all, as build_artifact's. Error(kUsage)
// naming the dimension when `dims` names one @main's parameters lack, leaves
// one of theirs without values, or gives a value above its bound.
SpecializedBuildReport build_specialized_artifact(const IRModule& mod, const std::vector<DimValues>& dims,
                                                  const BuildOptions& options, const std::string& output_dir);

}  // namespace switchyard
