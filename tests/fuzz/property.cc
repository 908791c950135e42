// The one way a fuzz target reports a broken property: a message, then abort
// (which libFuzzer and the replay driver both report as a failure).
#include <cstdio>
#include <cstdlib>

#include "fuzz_target.h"

namespace switchyard::fuzz {

void property_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace switchyard::fuzz
