// `switchyard import`: an ONNX model to text IR.
#include <iostream>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "text/printer.h"

namespace switchyard {

namespace {

struct ImportFlags {
  ModelFlags model;
  std::string output;
  bool show_weights = false;
};

void run_import(const ImportFlags& f) {
  std::string text = print_module(load_model(f.model), {.show_weights = f.show_weights});
  if (f.output.empty()) std::cout << text;
  else write_text_file_atomically(f.output, text);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import an ONNX model and print it as text IR (node spans are the ONNX node names). Weights over\n"
      "16 elements print as meta[Constant][i] references unless --show-weights is given; only the full\n"
      "text parses back. Every other command also takes the .onnx file directly.\n"
      "Example: switchyard import resnet18.onnx --show-weights -o resnet18.sy");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("-o,--output", flags->output, "write the text IR to this file instead of standard output");
  cmd->add_flag("--show-weights", flags->show_weights,
                "print every weight in full, so the text parses back (by default constants over 16 elements are "
                "meta[Constant][i] references)");
  cmd->callback([flags] { run_import(*flags); });
}

}  // namespace switchyard
