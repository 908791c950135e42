// `switchyard fmt`: placeholder until the text format lands.
#include "driver/commands.h"

namespace switchyard {
void add_fmt_command(CLI::App& app) { app.add_subcommand("fmt", "fmt a text-IR file"); }
}  // namespace switchyard
