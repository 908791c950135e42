// The C++ renderer of the kernel IR: prints a kernel as the translation
// unit the CPU backend compiles (the signature of codegen/kernel.h, a
// `Buffers` closure, one function per parallel loop run through
// services->parallel_for, `omp simd` inner loops, the sy_ helpers).
#pragma once

#include <set>
#include <string>

#include "codegen/scalar_spelling.h"
#include "kernel_ir/kernel.h"

namespace switchyard {

// The translation unit defining `extern "C" void name(...)`.
std::string render_cpu_kernel(const kernel_ir::Kernel& kernel, const std::string& name);

// An index expression (no loads or operator calls) as C++.
std::string render_cpu_index(const kernel_ir::Expr& index);

}  // namespace switchyard
