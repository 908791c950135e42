#include "targets/cpu/runtime/cpu_features.h"

#include <algorithm>
#include <utility>

namespace switchyard {
namespace {

using Probe = bool (*)();

// __builtin_cpu_supports takes only a string literal: one probe per feature,
// one for each of runtime/cpu_feature_names.cc's names.
const std::vector<std::pair<std::string, Probe>>& probes() {
#if defined(__x86_64__) || defined(__i386__)
#define SY_FEATURE(name) {name, [] { return __builtin_cpu_supports(name) != 0; }}
  static const std::vector<std::pair<std::string, Probe>> table = {
      SY_FEATURE("sse4.1"),   SY_FEATURE("sse4.2"),   SY_FEATURE("avx"),      SY_FEATURE("avx2"),
      SY_FEATURE("fma"),      SY_FEATURE("bmi"),      SY_FEATURE("bmi2"),     SY_FEATURE("avx512f"),
      SY_FEATURE("avx512bw"), SY_FEATURE("avx512dq"), SY_FEATURE("avx512vl"), SY_FEATURE("avx512cd"),
      SY_FEATURE("avx512vnni"), SY_FEATURE("avx512vbmi"),
  };
#undef SY_FEATURE
#else
  static const std::vector<std::pair<std::string, Probe>> table;
#endif
  return table;
}

}  // namespace

std::vector<std::string> probed_cpu_features() {
  std::vector<std::string> names;
  for (const auto& [name, probe] : probes()) names.push_back(name);
  return names;
}

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& features) {
  std::vector<std::string> missing;
  for (const std::string& feature : features) {
    auto it = std::find_if(probes().begin(), probes().end(), [&](const auto& p) { return p.first == feature; });
    if (it == probes().end() || !it->second()) missing.push_back(feature);
  }
  return missing;
}

bool cpu_has_avx2_fma() {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
}

}  // namespace switchyard
