// The passes that need nothing but the module, registered once each: a pass
// declares its name, opt level and required passes in its own PassInfo, and
// this registry reads them from the pass its factory makes. Sequential runs
// a missing requirement from here; pass_by_name (src/pipeline) adds the
// passes that need the build's devices.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transform/pass.h"

namespace switchyard {

// The registered passes, one made by each factory, sorted by name.
const std::vector<Pass>& registered_passes();

// The registered pass of that name, or nothing.
std::optional<Pass> registered_pass(const std::string& name);

}  // namespace switchyard
