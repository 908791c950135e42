// How long oneDNN's OpenMP threads spin before they sleep.
#pragma once

namespace switchyard {

// Debian's oneDNN runs OpenMP threads of its own next to the runtime's pool.
// libgomp's default spin (300,000 rounds after each parallel region) holds
// the cores the pool needs for the loop kernels between primitives (on a
// busy two-core machine a two-thread encoder run took 250 ms instead of
// 17); passive waiting wakes a sleeping thread for every primitive (a
// two-thread MLP 0.43 ms instead of 0.08). A short spin, 10,000 rounds,
// catches back-to-back primitives and frees the core during loops. libgomp
// reads its settings once, when it loads (before main), so unless the user
// set OMP_WAIT_POLICY or GOMP_SPINCOUNT the program restarts itself once
// with GOMP_SPINCOUNT=10000. Returns only if it did not restart.
void restart_with_short_openmp_spin(char** argv);

}  // namespace switchyard
