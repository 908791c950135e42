#include "driver/openmp_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace switchyard {

void restart_with_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);
}

}  // namespace switchyard
