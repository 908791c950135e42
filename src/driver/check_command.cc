// `switchyard check`: parses and type-checks a text-IR file.
#include <iostream>
#include <memory>

#include "driver/commands.h"
#include "text/parser.h"
#include "transform/infer_type.h"

namespace switchyard {

void add_check_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Parse and type-check a text-IR file; print 'ok', or the first error with its\n"
      "file:line:column, the source line and a caret (exit status 1).\n"
      "Example: switchyard check model.sy");
  cmd->add_option("file", *file, "text-IR file")->required();
  cmd->callback([file] {
    infer_type(parse_file(*file));
    std::cout << "ok\n";
  });
}

}  // namespace switchyard
