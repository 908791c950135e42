#include "runtime/cpu_feature_names.h"

#include <algorithm>

namespace switchyard {

const std::vector<std::string>& known_cpu_features() {
#if defined(__x86_64__) || defined(__i386__)
  // targets/cpu/runtime/cpu_features.cc probes each (a test checks they agree).
  static const std::vector<std::string> names = {
      "sse4.1",   "sse4.2",   "avx",      "avx2",     "fma",        "bmi",        "bmi2",
      "avx512f",  "avx512bw", "avx512dq", "avx512vl", "avx512cd",   "avx512vnni", "avx512vbmi",
  };
#else
  static const std::vector<std::string> names;
#endif
  return names;
}

bool is_known_cpu_feature(const std::string& feature) {
  const std::vector<std::string>& known = known_cpu_features();
  return std::find(known.begin(), known.end(), feature) != known.end();
}

}  // namespace switchyard
