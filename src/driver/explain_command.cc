// `switchyard explain`: why a binding landed on its device.
#include <iostream>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "frontend/load_model.h"
#include "placement/explain.h"
#include "support/error.h"

namespace switchyard {

namespace {

struct ExplainFlags {
  ModelFlags model;
  DeviceFlags devices;
  std::vector<std::string> rules;
  std::vector<std::string> nodes;
  ObjectiveFlags objective;
};

void run_explain(const ExplainFlags& f) {
  IRModule mod = load_model(f.model);
  std::optional<CompilationConfig> config = config_from_flags(f.devices, mod);
  if (!config) throw Error(ErrorKind::kUsage, "explain needs the build's devices (--devices cpu:0,cpu:1)");
  std::vector<PlacementRule> rules = rules_from_flags(f.rules, config);
  std::optional<LatencyObjective> latency = objective_from_flags(f.objective);
  PlanResult plan = plan_with_rules(mod, *config, rules, latency);
  // %N bindings and line numbers name text-IR nodes; ONNX nodes go by name.
  std::string source = is_onnx_file(f.model.file) ? std::string() : read_text_file(f.model.file);
  std::string out;
  if (plan.latency)
    out += predicted_times_text(predict_times(plan.graph, *config, *plan.latency, plan.solution.device), plan.graph,
                                *config) +
           latency_choice_text(*plan.choice);
  for (const std::string& name : f.nodes) {
    std::vector<PlaceId> ids = select_place_nodes(plan.graph, name, source);
    if (ids.empty())
      throw Error(ErrorKind::kUsage, "no node matches '" + name +
                                         "' (give a binding like %2, a parameter like %x, a line number, or a model "
                                         "node name)");
    for (PlaceId id : ids) out += explain_place_node(plan, id, *config, rules);
  }
  std::cout << out;
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Explain where device planning put a node, and why.\n"
      "Example: switchyard explain mlp.sy --devices cpu:0,cpu:1 --node %2");
  add_model_flags(cmd, &flags->model);
  add_device_flags(cmd, &flags->devices);
  cmd->add_option("--place", flags->rules, "placement rule op:NAME=DEVICE or node:GLOB=DEVICE (repeatable)");
  add_objective_flags(cmd, &flags->objective);
  cmd->add_option("--node", flags->nodes, "a binding (%2), parameter (%x), line, or model node name")->required();
  cmd->callback([flags] { run_explain(*flags); });
}

}  // namespace switchyard
