// The OpenMP wait policy the command-line program runs under.
#pragma once

namespace switchyard {

// oneDNN's OpenMP threads spin after each primitive by default, holding the
// cores that the runtime's own pool needs for the loop kernels between
// primitives: on a busy two-core machine a two-thread encoder run took
// 250 ms instead of 17. libgomp reads OMP_WAIT_POLICY once, when it loads
// (before main), so unless the user chose a policy the program restarts
// itself once with OMP_WAIT_POLICY=PASSIVE. Returns only if it did not
// restart (a policy was set, or exec failed: the default policy then stays).
void restart_with_passive_openmp(char** argv);

}  // namespace switchyard
