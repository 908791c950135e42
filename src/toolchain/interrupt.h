// Interrupting a compile cleanly. A program that wants it (the CLI) installs
// the handlers once; SIGINT, SIGTERM or SIGHUP then stop every compiler child
// at once (each runs in its own process group, so its own children go too),
// and the compile fails at its next child or before its artifact is moved
// into place. Its staging directory and temporary files are removed as the
// error unwinds, so no partial artifact and no orphaned compiler remain.
#pragma once

#include <sys/types.h>

#include <string>

namespace switchyard {

// Installs the handlers (idempotent). Without them a signal acts as usual.
// `switchyard run` installs them too and checks between runs.
void install_interrupt_handlers();

// The signal that interrupted this process, or 0.
int interrupting_signal();

// "compile interrupted by SIGTERM: no artifact was written" for `activity`
// "compile" and `consequence` "no artifact was written".
std::string interruption_message(const std::string& activity = "compile",
                                 const std::string& consequence = "no artifact was written");
// Throws Error(kBackend) with the compile's message if a signal arrived.
void throw_if_interrupted();

// Children that an interrupt stops: run_process registers each while it runs.
// register_child stops the child at once when an interrupt came first.
void register_child(pid_t process_group);
void unregister_child(pid_t process_group);

}  // namespace switchyard
