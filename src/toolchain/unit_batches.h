// Which translation units share one compiler process. Every compile pays a
// fixed cost (starting the compiler and assembler, parsing the headers)
// that is as large as optimising a small kernel, so units that may be joined
// (TranslationUnit::joinable) and have the same flags are compiled several
// to a process: in as many batches as keep the parallel compilers evenly
// busy, each cached as one object keyed by its whole source.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "toolchain/toolchain.h"

namespace switchyard {

// Groups of indices into `units` in the order their first members come,
// each compiled as one translation unit: every unit is in exactly one
// group, a unit that may not be joined alone in its own. The same units
// always make the same groups (the object cache keys a group by its source).
std::vector<std::vector<size_t>> plan_unit_batches(const std::vector<TranslationUnit>& units, int parallel_compiles);

// The source of a group of two or more units: each member's code after a
// #line directive naming its own file (NAME.cc), so that the compiler's
// messages name the kernel and line they are about.
std::string batch_source(const std::vector<TranslationUnit>& units, const std::vector<size_t>& members);

}  // namespace switchyard
