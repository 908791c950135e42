// Passes by name, the backend's included.
#include "backend/compiler_passes.h"

#include <algorithm>

#include "backend/plan_layouts.h"
#include "support/error.h"

namespace switchyard {

namespace {
constexpr const char* kPlanLayouts = "PlanLayouts";
}  // namespace

Pass compiler_pass_by_name(const std::string& name, const PipelineOptions& options) {
  if (name == kPlanLayouts) return PlanLayouts();
  try {
    return pass_by_name(name, options);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kPass) throw;
    std::string known;
    for (const std::string& n : compiler_pass_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::kPass, "unknown pass '" + name + "' (known: " + known + ")");
  }
}

std::vector<std::string> compiler_pass_names() {
  std::vector<std::string> names = pass_names();
  names.insert(std::lower_bound(names.begin(), names.end(), std::string(kPlanLayouts)), kPlanLayouts);
  return names;
}

}  // namespace switchyard
