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
};

void run_import(const ImportFlags& f) {
  std::string text = print_module(load_model(f.model));
  if (f.output.empty()) std::cout << text;
  else write_text_file_atomically(f.output, text);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import an ONNX model and print it as text IR (weights as constants; node spans are the ONNX\n"
      "node names). Every other command also takes the .onnx file directly.\n"
      "Example: switchyard import resnet18.onnx -o resnet18.sy");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("-o,--output", flags->output, "write the text IR to this file instead of standard output");
  cmd->callback([flags] { run_import(*flags); });
}

}  // namespace switchyard
