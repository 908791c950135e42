// The x86 instruction-set extensions generated code may be compiled for,
// and whether this CPU has them: an artifact built with -march=native on
// one machine must not die of an illegal instruction on another.
#pragma once

#include <string>
#include <vector>

namespace switchyard {

// The features the manifest may name, as GCC and Clang spell them after -m
// ("avx2", "avx512f", ...).
const std::vector<std::string>& known_cpu_features();
bool is_known_cpu_feature(const std::string& feature);
// Those of `features` this CPU lacks (unknown names count as lacking).
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& features);
// Whether this CPU runs AVX2 with FMA: the runtime's own kernels (Winograd,
// the packed matmul) pick their AVX2 code or their plain x86-64 code by it.
bool cpu_has_avx2_fma();

}  // namespace switchyard
