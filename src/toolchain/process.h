// Running a tool (the C++ compiler) as a child process and capturing what it
// prints, without a shell: arguments are passed as they are.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace switchyard {

struct ProcessResult {
  bool started = false;  // false when the program could not be run at all
  int exit_code = -1;    // the exit status, or 128 + signal number
  std::string output;    // stdout and stderr, interleaved
};

// Runs argv[0] (looked up in PATH) with the rest as arguments and waits.
// Safe to call from several threads at once.
ProcessResult run_process(const std::vector<std::string>& argv);

// The command as a shell line, for messages: arguments with spaces quoted.
std::string command_line(const std::vector<std::string>& argv);

// Whether no process `pid` runs on this machine, so what it was writing is
// abandoned. A PID since reused by another process counts as running: the
// caller errs towards keeping files.
bool process_is_gone(pid_t pid);

}  // namespace switchyard
