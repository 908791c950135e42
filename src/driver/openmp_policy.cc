#include "driver/openmp_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace switchyard {

void restart_with_short_openmp_spin(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  setenv("GOMP_SPINCOUNT", "10000", 1);
  execv("/proc/self/exe", argv);
}

}  // namespace switchyard
