// Whether this CPU has the x86 instruction-set extensions generated code
// may be compiled for (runtime/cpu_feature_names.h names them): an artifact
// built with -march=native on one machine must not die of an illegal
// instruction on another.
#pragma once

#include <string>
#include <vector>

#include "runtime/cpu_feature_names.h"

namespace switchyard {

// The features this file can probe, in runtime/cpu_feature_names.h's order.
std::vector<std::string> probed_cpu_features();
// Those of `features` this CPU lacks (unknown names count as lacking).
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& features);
// Whether this CPU runs AVX2 with FMA: the runtime's own kernels (Winograd,
// the packed matmul) pick their AVX2 code or their plain x86-64 code by it.
bool cpu_has_avx2_fma();

}  // namespace switchyard
