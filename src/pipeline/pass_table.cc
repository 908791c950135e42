// The table of named passes.
#include "pipeline/pass_table.h"

#include <functional>
#include <map>

#include "device/plan_devices.h"
#include "support/error.h"
#include "transform/fuse_ops.h"
#include "transform/dead_code_elimination.h"
#include "transform/eliminate_common_subexpr.h"
#include "transform/fold_constant.h"
#include "transform/infer_type_pass.h"
#include "transform/inline.h"
#include "transform/simplify_expr.h"
#include "transform/to_a_normal_form.h"
#include "transform/to_graph_normal_form.h"

namespace switchyard {

namespace {

using Factory = std::function<Pass(const PipelineOptions&)>;

const std::map<std::string, Factory>& table() {
  static const std::map<std::string, Factory> passes = {
      {"FuseOps", [](const PipelineOptions&) { return FuseOps(); }},
      {"InferType", [](const PipelineOptions&) { return InferType(); }},
      {"PlanDevices",
       [](const PipelineOptions& o) {
         if (!o.config)
           throw Error(ErrorKind::kUsage, "PlanDevices needs the build's devices (--devices cpu:0,cpu:1)");
         return PlanDevices(*o.config, o.rules);
       }},
      {"SimplifyExpr", [](const PipelineOptions&) { return SimplifyExpr(); }},
      {"FoldConstant", [](const PipelineOptions&) { return FoldConstant(); }},
      {"EliminateCommonSubexpr", [](const PipelineOptions&) { return EliminateCommonSubexpr(); }},
      {"DeadCodeElimination", [](const PipelineOptions&) { return DeadCodeElimination(); }},
      {"ToANormalForm", [](const PipelineOptions&) { return ToANormalForm(); }},
      {"ToGraphNormalForm", [](const PipelineOptions&) { return ToGraphNormalForm(); }},
      {"Inline", [](const PipelineOptions&) { return Inline(); }},
  };
  return passes;
}

}  // namespace

Pass pass_by_name(const std::string& name, const PipelineOptions& options) {
  auto it = table().find(name);
  if (it == table().end()) {
    std::string known;
    for (const auto& [n, f] : table()) known += (known.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::kPass, "unknown pass '" + name + "' (known: " + known + ")");
  }
  return it->second(options);
}

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const auto& [n, f] : table()) out.push_back(n);
  return out;
}

Pass default_pipeline(const PipelineOptions& options) {
  std::vector<Pass> passes;
  for (const char* name : {"InferType", "PlanDevices", "SimplifyExpr", "FoldConstant", "EliminateCommonSubexpr",
                           "DeadCodeElimination"})
    passes.push_back(pass_by_name(name, options));
  passes.push_back(pass_by_name("FuseOps", options));
  return Sequential(std::move(passes), "DefaultPipeline");
}

}  // namespace switchyard
