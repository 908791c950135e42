// The lowered program as text, for `switchyard compile --print-after STAGE`
// and test failures: its buffers (kind, device, type, layout, arena offset
// once memory is planned) and its steps in order (kernel calls with their
// kernels, copies, moves, if/else), each with the model line it came from.
#pragma once

#include <string>
#include <vector>

#include "ir/compilation_config.h"
#include "lower/lower.h"
#include "lower/memory_plan.h"

namespace switchyard {

// Where the memory plan put each buffer: `tensor_of_buffer` as
// memory_problem fills it. Absent before memory planning.
struct LoweredMemory {
  const MemoryPlan* plan = nullptr;
  const std::vector<int>* tensor_of_buffer = nullptr;
};

std::string print_lowered_program(const LoweredProgram& program, const CompilationConfig& config,
                                  LoweredMemory memory = {});

}  // namespace switchyard
