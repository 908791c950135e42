// `switchyard check`: parses and type-checks a text-IR file.
#include <iostream>
#include <memory>

#include "driver/commands.h"
#include "driver/driver_util.h"
#include "transform/infer_type.h"

namespace switchyard {

void add_check_command(CLI::App& app) {
  auto model = std::make_shared<ModelFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Parse (or import) and type-check a text-IR or ONNX file; print 'ok', or the first error with its\n"
      "file:line:column, the source line and a caret (exit status 1).\n"
      "Example: switchyard check model.sy");
  add_model_flags(cmd, model.get());
  cmd->callback([model] {
    infer_type(load_model(*model));
    std::cout << "ok\n";
  });
}

}  // namespace switchyard
