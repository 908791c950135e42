// `switchyard fmt`: prints a text-IR file in canonical form.
#include <iostream>
#include <map>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "text/printer.h"

namespace switchyard {

namespace {

struct FmtFlags {
  ModelFlags model;
  PrintOptions::Devices devices = PrintOptions::Devices::kAll;
};

void run_fmt(const FmtFlags& flags) {
  // The whole text is built before anything is written: an error leaves no
  // partial output behind.
  std::string text = print_module(load_model(flags.model), {.devices = flags.devices});
  std::cout << text << std::flush;
}

}  // namespace

void add_fmt_command(CLI::App& app) {
  auto flags = std::make_shared<FmtFlags>();
  CLI::App* cmd = app.add_subcommand(
      "fmt",
      "Print a text-IR file in canonical form (numbered bindings, devices after what they place,\n"
      "default attributes left out). The output parses back to the same module.\n"
      "Example: switchyard fmt model.sy > model.canonical.sy");
  add_model_flags(cmd, &flags->model);
  const std::map<std::string, PrintOptions::Devices> modes = {{"all", PrintOptions::Devices::kAll},
                                                              {"changed", PrintOptions::Devices::kChanged},
                                                              {"none", PrintOptions::Devices::kNone}};
  cmd->add_option("--show-devices", flags->devices,
                  "all (default), changed (only where a binding's device changes; for reading), "
                  "or none")
      ->transform(CLI::CheckedTransformer(modes, CLI::ignore_case));
  cmd->callback([flags] { run_fmt(*flags); });
}

}  // namespace switchyard
