// `switchyard opt`: runs named passes on a text-IR file and prints the result.
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "pipeline/pass_table.h"
#include "placement/dot_export.h"
#include "support/error.h"
#include "text/printer.h"
#include "transform/instruments.h"

namespace switchyard {

namespace {

struct OptFlags {
  ModelFlags model;
  std::string passes;
  DeviceFlags devices;
  std::vector<std::string> rules;
  bool check_each = false;
  std::string print_devices = "all";
  bool time_passes = false;
  bool show_weights = false;
  std::string emit_dot, emit_svg;
  std::vector<std::string> print_before, print_after;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void run_opt(const OptFlags& f) {
  IRModule mod = load_model(f.model);
  PipelineOptions options;
  options.config = config_from_flags(f.devices, mod);
  options.rules = rules_from_flags(f.rules, options.config);
  std::vector<Pass> passes;
  for (const std::string& name : split_names(f.passes)) passes.push_back(pass_by_name(name, options));
  if (passes.empty()) throw Error(ErrorKind::kUsage, "-p needs at least one pass name");

  PassContext ctx;
  ctx.diagnostics = stderr_diagnostics();
  auto timing = std::make_shared<TimingInstrument>();
  std::ostringstream dumps;
#ifndef NDEBUG
  bool check = true;  // debug builds always check
#else
  bool check = f.check_each;
#endif
  if (check) ctx.instruments.push_back(std::make_shared<InvariantChecker>());
  if (f.time_passes) ctx.instruments.push_back(timing);
  PrintOptions print;
  print.devices = f.print_devices == "none"      ? PrintOptions::Devices::kNone
                  : f.print_devices == "changed" ? PrintOptions::Devices::kChanged
                                                 : PrintOptions::Devices::kAll;
  print.show_weights = f.show_weights;
  if (!f.print_before.empty() || !f.print_after.empty())
    ctx.instruments.push_back(std::make_shared<PrintIRInstrument>(
        std::set<std::string>(f.print_before.begin(), f.print_before.end()),
        std::set<std::string>(f.print_after.begin(), f.print_after.end()), dumps, print));
  PassContext::Scope scope(ctx);
  IRModule out = Sequential(std::move(passes), "opt")(mod, ctx);

  std::string text = print_module(out, print);
  if (!f.emit_dot.empty() || !f.emit_svg.empty()) {
    std::string dot = placed_graph_to_dot(out);
    if (!f.emit_dot.empty()) write_text_file_atomically(f.emit_dot, dot);
    if (!f.emit_svg.empty()) render_svg(dot, f.emit_svg);
  }
  std::cerr << dumps.str();
  if (f.time_passes) std::cerr << timing->report();
  std::cout << text;
}

}  // namespace

void add_opt_command(CLI::App& app) {
  auto flags = std::make_shared<OptFlags>();
  CLI::App* cmd = app.add_subcommand(
      "opt",
      "Run passes on a text-IR file and print the result.\n"
      "Example: switchyard opt model.sy -p InferType,PlanDevices --devices cpu:0,cpu:1 --print-devices all\n"
      "Constants over 16 elements print as meta[Constant][i]; --show-weights prints text that parses back.\n"
      "The layouts a build keeps between oneDNN primitives: -p InferType,PlanDevices,FuseOps,PlanLayouts");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("-p,--passes", flags->passes, "comma-separated pass names, run in order")->required();
  add_device_flags(cmd, &flags->devices);
  cmd->add_option("--place", flags->rules, "placement rule op:NAME=DEVICE or node:GLOB=DEVICE (repeatable)");
  cmd->add_flag("--check-each", flags->check_each, "run the invariant checker after every pass");
  cmd->add_option("--print-devices", flags->print_devices, "which devices to print: all, changed or none")
      ->check(CLI::IsMember({"all", "changed", "none"}));
  cmd->add_flag("--time-passes", flags->time_passes, "print the time of each pass on stderr");
  cmd->add_flag("--show-weights", flags->show_weights,
                "print every constant in full, so the text parses back; by default constants over 16 elements are "
                "meta[Constant][i] references (also in --print-ir-before/after)");
  cmd->add_option("--emit-dot", flags->emit_dot, "write the placed data-flow graph as Graphviz dot");
  cmd->add_option("--emit-svg", flags->emit_svg, "render the placed data-flow graph to SVG with Graphviz");
  cmd->add_option("--print-ir-before", flags->print_before, "dump the IR before this pass (or 'all') on stderr");
  cmd->add_option("--print-ir-after", flags->print_after, "dump the IR after this pass (or 'all') on stderr");
  cmd->callback([flags] { run_opt(*flags); });
}

}  // namespace switchyard
