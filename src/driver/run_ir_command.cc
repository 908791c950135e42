// `switchyard run-ir`: runs a text-IR module with the reference interpreter
// on .npy inputs and writes each output as .npy.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "interp/evaluate.h"
#include "ir/output_names.h"
#include "runtime/npy.h"
#include "support/error.h"
#include "transform/infer_type.h"
#include "transform/specialize.h"

namespace switchyard {

namespace {

struct RunIrFlags {
  ModelFlags model;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string output_dir = ".";
  std::string entry = "main";
};

void run_ir(const RunIrFlags& flags) {
  IRModule mod = infer_type(load_model(flags.model));
  std::map<std::string, NDArray> inputs = read_npy_inputs(flags.inputs);
  std::map<std::string, DType> expected;
  for (const Var& param : mod.lookup(flags.entry)->params)
    if (const TensorTypeNode* type = as_tensor(param->checked_type())) expected[param->name_hint] = type->dtype;
  adopt_bfloat16_bits(inputs, expected);
  // Everything is evaluated before anything is written: a bad input leaves no output.
  // A symbolic model runs at the inputs' shapes.
  mod = specialize_for_inputs(mod, inputs, flags.entry);
  std::vector<Value> outputs = flatten_tensors(evaluate(mod, inputs, flags.entry));
  std::filesystem::path dir(flags.output_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kUsage, "cannot create the output directory " + flags.output_dir + ": " + ec.message());
  std::vector<std::string> names = output_names(mod.lookup(flags.entry), outputs.size());
  std::vector<OutputFiles> files = output_files(names);
  for (size_t i = 0; i < outputs.size(); ++i) {
    write_output_files(dir, files[i], outputs[i].tensor);
    std::cout << output_label(names[i], files[i]) << ": " << value_summary(outputs[i]) << "  "
              << tensor_statistics(outputs[i].tensor) << "\n";
  }
}

}  // namespace

void add_run_ir_command(CLI::App& app) {
  auto flags = std::make_shared<RunIrFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run-ir",
      "Run a text-IR module with the reference interpreter. Inputs are .npy files given by parameter name;\n"
      "each output (a tuple result flattened in order) is written to DIR/output_<i>.npy and summarised; an output\n"
      "with a name of its own (an ONNX graph's) is also DIR/NAME.npy, characters other than letters, digits and _ as _.\n"
      "Example: switchyard run-ir examples/mlp.sy --input x=x.npy --input w1=w1.npy --input b1=b1.npy \\\n"
      "           --input w2=w2.npy --input b2=b2.npy --output-dir out");
  add_model_flags(cmd, &flags->model);
  cmd->add_option("-i,--input", flags->inputs, "an input as NAME=FILE.npy (repeat for each parameter)");
  cmd->add_option("-o,--output-dir", flags->output_dir, "where the outputs' .npy files are written (default: .)");
  cmd->add_option("--entry", flags->entry, "the function to run (default: main)");
  cmd->callback([flags] { run_ir(*flags); });
}

}  // namespace switchyard
