// `switchyard check`: placeholder until the text format lands.
#include "driver/commands.h"

namespace switchyard {
void add_check_command(CLI::App& app) { app.add_subcommand("check", "check a text-IR file"); }
}  // namespace switchyard
