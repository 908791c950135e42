// The lowered program's own invariants, checked after each lowering stage
// (in tests and debug builds, and with --check-each): the IR's invariant
// checker stops at lowering, and a stage that breaks the program (a buffer
// on the wrong device, a read before any write, an unbalanced if) would
// otherwise surface as a wrong answer or a crash at run time.
#pragma once

#include <string>

#include "ir/compilation_config.h"
#include "lower/lower.h"

namespace switchyard {

// Throws Error(kInvariant) "after STAGE: ..." naming the step or buffer and
// its span, at the first violation of:
// - every buffer is on one of the build's devices; inputs, outputs and
//   weights are the program's, in order, on their weights' devices;
// - every step names existing buffers, kernel calls and copies; a kernel's
//   buffers are on its call's device; a copy goes from its source device to
//   its destination device; a move stays on one device; if/else/end nest;
// - no step writes an input or a weight, and every intermediate or output
//   buffer a step reads was written by an earlier step;
// - once kernels are generated, every call has its kernel, with as many
//   inputs and outputs as the step has buffers, of the buffers' types.
void verify_lowered_program(const LoweredProgram& program, const CompilationConfig& config, const std::string& stage);

}  // namespace switchyard
