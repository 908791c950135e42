// The names a manifest device's cpu_features may hold: the x86
// instruction-set extensions generated code may be compiled for, as GCC and
// Clang spell them after -m ("avx2", "avx512f", ...). The toolchain reports
// them, the manifest checks them; whether this CPU has them is the CPU
// device's question (targets/cpu/runtime/cpu_features.h).
#pragma once

#include <string>
#include <vector>

namespace switchyard {

// Empty on a host that is not x86.
const std::vector<std::string>& known_cpu_features();
bool is_known_cpu_feature(const std::string& feature);

}  // namespace switchyard
