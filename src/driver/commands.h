// Each `switchyard` subcommand registers itself on the CLI11 app; one file per
// command. A command's callback throws switchyard::Error on bad input; main
// renders it once and exits 1.
#pragma once

#include <CLI/CLI.hpp>

namespace switchyard {

void add_fmt_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_opt_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_run_ir_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_profile_command(CLI::App& app);

}  // namespace switchyard
