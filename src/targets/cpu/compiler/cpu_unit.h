// The translation unit every CPU kernel compiles to: the kernel's helpers,
// its `Buffers` closure struct, the parallel loop functions, `run()` and the
// exported entry point. The kernel IR renderer (cpu_render.cc) fills one.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_code.h"

namespace switchyard {

// A pointer field of the kernel's `Buffers` struct, which every parallel
// loop body receives as its closure.
struct BufferField {
  std::string name;         // "in0_x", "out0", "scratch"
  std::string type;         // element storage type
  bool is_const = false;
  std::string initializer;  // C++ expression in run()
  std::string comment;
};

struct CpuUnit {
  std::string name;                // the C symbol
  std::set<std::string> includes;  // beyond the standard ones
  std::set<CpuHelper> helpers;
  std::vector<BufferField> buffers;
  CodeWriter shared;       // global scope, before the kernel's namespace: loops kernels share
  CodeWriter definitions;  // namespace scope: plans, loop bodies
  CodeWriter setup;        // run(): before `buffers` is built (scratch allocation)
  CodeWriter entry;        // run(): the work
};

// The translation unit, headed by `summary` (what it computes) and the span
// it came from.
std::string assemble_cpu_unit(const CpuUnit& unit, const std::string& summary, const Span& span);

}  // namespace switchyard
