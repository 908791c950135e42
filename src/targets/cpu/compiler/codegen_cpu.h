// The CPU target's code generator (its row of targets/code_generators.cc):
// kernels as C++ built into model.so, anchors through oneDNN.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "targets/code_generators.h"

namespace switchyard {

// oneDNN as the library of a CPU kernel's anchor.
const AnchorLibrary& onednn_library();
// No library: every anchor becomes generated loops.
const AnchorLibrary& no_anchor_library();
// The anchors' library a CPU target names with its -libs option: oneDNN
// (absent, or -libs=onednn), or none (-libs=none), which runs every anchor
// as generated loops, to compare them with oneDNN on one program
// (bench/fallback_window_bench.cc) or to step around the library. A null
// target (a function not yet placed) is oneDNN's. Throws Error(kUsage)
// naming the target for another -libs value.
const AnchorLibrary& cpu_anchor_library(const Target* target);

// Whether this machine's oneDNN runs `spec` only with its reference loops
// (asked once per spec and process, as kernel generation asks).
bool dnnl_runs_reference_once(const PrimitiveSpec& spec);

// Generates the kernel of a primitive function for a CPU target (its options,
// e.g. -mcpu, go to the compiler, not here). `constant_inputs[i]` says
// flattened input i is a weight, unchanged between runs at one address
// (oneDNN kernels keep a copy reordered into the primitive's preferred
// layout); missing entries mean false. Throws Error(kBackend) naming the
// operator and span when an operator has no CPU kernel.
KernelSource generate_cpu_kernel(const Function& primitive, const std::string& name,
                                 const std::vector<bool>& constant_inputs = {});
// The same with the anchors calling `library`, whatever the target names
// (tests compare each kind of kernel with the interpreter this way).
KernelSource generate_cpu_kernel_with(const AnchorLibrary& library, const Function& primitive, const std::string& name,
                                      const std::vector<bool>& constant_inputs = {});

const CodeGenerator& cpu_code_generator();

}  // namespace switchyard
