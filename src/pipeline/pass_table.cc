// Passes by name: the registered passes (transform/pass_registry.h) and
// PlanDevices, the one that needs the build's devices; and the default
// pipeline, written out step by step.
#include "pipeline/pass_table.h"

#include <algorithm>

#include "device/plan_devices.h"
#include "support/error.h"
#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/fuse_ops.h"
#include "transform/infer_type_pass.h"
#include "transform/pass_registry.h"
#include "transform/simplify_expr.h"
#include "transform/to_graph_normal_form.h"

namespace switchyard {

namespace {

Pass plan_devices_pass(const PipelineOptions& options) {
  if (!options.config)
    throw Error(ErrorKind::kUsage, "PlanDevices needs the build's devices (--devices cpu:0,cpu:1)");
  return PlanDevices(*options.config, options.rules);
}

}  // namespace

Pass pass_by_name(const std::string& name, const PipelineOptions& options) {
  if (name == plan_devices_info().name) return plan_devices_pass(options);
  if (std::optional<Pass> pass = registered_pass(name)) return *pass;
  std::string known;
  for (const std::string& n : pass_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kPass, "unknown pass '" + name + "' (known: " + known + ")");
}

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const Pass& p : registered_passes()) out.push_back(p.name());
  out.insert(std::lower_bound(out.begin(), out.end(), plan_devices_info().name), plan_devices_info().name);
  return out;
}

Pass default_pipeline(const PipelineOptions& options) {
  return Sequential(
      {
          InferType(),                 // every node gets its type
          plan_devices_pass(options),  // every node gets its device; copies where values cross
          ToGraphNormalForm(),         // let-bound values become dataflow edges, so they fuse
          SimplifyExpr(),              // algebraic identities, layer normalisation folded
          FoldConstant(),              // constant sub-expressions evaluated
          EliminateCommonSubexpr(),    // equal computations shared
          DeadCodeElimination(),       // unused bindings dropped
          FuseOps(),                   // operator calls grouped into kernels
      },
      "DefaultPipeline");
}

}  // namespace switchyard
