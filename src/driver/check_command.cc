// `switchyard check`: parses and type-checks a text-IR file.
#include <iostream>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "transform/infer_type.h"

namespace switchyard {

namespace {

// A model with symbolic dimensions (an ONNX dim_param) is fine to check but
// not yet to compile: its signature says which dimensions are open.
void print_symbolic_signature(const IRModule& mod) {
  const Function* main = mod.find("main");
  if (!main || !find_symbolic_dim((*main)->checked_type())) return;
  std::cout << "symbolic dimensions (compile needs them fixed with --input-shape):\n";
  for (const Var& p : (*main)->params) std::cout << "  %" << p->name_hint << ": " << type_to_string(p->checked_type()) << "\n";
  std::cout << "  result: " << type_to_string((*main)->ret_type) << "\n";
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto model = std::make_shared<ModelFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Parse (or import) and type-check a text-IR or ONNX file; print 'ok', or the first error with its\n"
      "file:line:column, the source line and a caret (exit status 1).\n"
      "Example: switchyard check model.sy");
  add_model_flags(cmd, model.get());
  cmd->callback([model] {
    IRModule mod = infer_type(load_model(*model));
    std::cout << "ok\n";
    print_symbolic_signature(mod);
  });
}

}  // namespace switchyard
