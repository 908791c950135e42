// Passes by name: the registered passes (transform/pass_registry.h),
// PlanDevices, the one that needs the build's devices, and the back end's
// PlanLayouts.
#include "pipeline/pass_table.h"

#include <algorithm>

#include "layout/plan_layouts.h"
#include "placement/plan_devices.h"
#include "support/error.h"
#include "transform/pass_registry.h"

namespace switchyard {

namespace {

constexpr const char* kPlanLayouts = "PlanLayouts";

}  // namespace

Pass plan_devices_pass(const PipelineOptions& options) {
  if (!options.config)
    throw Error(ErrorKind::kUsage, "PlanDevices needs the build's devices (--devices cpu:0,cpu:1)");
  return PlanDevices(*options.config, options.rules, options.latency);
}

Pass pass_by_name(const std::string& name, const PipelineOptions& options) {
  if (name == plan_devices_info().name) return plan_devices_pass(options);
  if (name == kPlanLayouts) return PlanLayouts();
  if (std::optional<Pass> pass = registered_pass(name)) return *pass;
  std::string known;
  for (const std::string& n : pass_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kPass, "unknown pass '" + name + "' (known: " + known + ")");
}

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const Pass& p : registered_passes()) out.push_back(p.name());
  for (std::string name : {plan_devices_info().name, std::string(kPlanLayouts)})
    out.insert(std::lower_bound(out.begin(), out.end(), name), name);
  return out;
}

}  // namespace switchyard
