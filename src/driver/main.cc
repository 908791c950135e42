// The `switchyard` command-line program.
#include <cstdio>
#include <iostream>

#include "driver/commands.h"
#include "support/error.h"
#include "toolchain/interrupt.h"

int main(int argc, char** argv) {
  // libgomp's short spin is set before libgomp loads, by a library the
  // runtime links (runtime/openmp_wait_policy.h): no restart is needed.
  CLI::App app{"switchyard: a device-aware deep-learning compiler.\n"
               "Example: switchyard check examples/mlp.sy"};
  app.require_subcommand(1);
  switchyard::add_fmt_command(app);
  switchyard::add_check_command(app);
  switchyard::add_opt_command(app);
  switchyard::add_explain_command(app);
  switchyard::add_run_ir_command(app);
  switchyard::add_compile_command(app);
  switchyard::add_run_command(app);
  switchyard::add_import_command(app);
  switchyard::add_inspect_command(app);
  switchyard::add_profile_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const switchyard::Error& e) {
    // A compile or run stopped by a signal says so (whichever step noticed)
    // and exits as the shell expects of one.
    if (int signo = switchyard::interrupting_signal()) {
      std::cerr << "error: "
                << (app.got_subcommand("run") ? switchyard::interruption_message("run", "no output was written")
                                              : switchyard::interruption_message())
                << "\n";
      return 128 + signo;
    }
    std::cerr << e.render() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
