// Runs test code on a thread with a fixed stack, so deep-chain tests check
// the 8 MiB default regardless of the shell's `ulimit -s`.
#pragma once

#include <functional>

namespace switchyard::testing {

// Runs `body` on a new thread whose stack is exactly 8 MiB and waits for it.
void run_with_8mib_stack(const std::function<void()>& body);

}  // namespace switchyard::testing
