// What the early constructor (early_short_spin.cc) found and did about
// libgomp's spin count. A C interface: the library is loaded on its own.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// GOMP_SPINCOUNT's short value: rounds a waiting thread spins before it
// blocks (tens of microseconds: long enough to bridge the gaps between a
// run's kernels, short enough that a thread waiting for a core another
// process holds soon gives it up; docs/design.md has the measurements).
#define SY_OPENMP_SHORT_SPIN "3000"

enum {
  SY_OPENMP_WAIT_UNKNOWN = 0,       // the constructor has not run
  SY_OPENMP_WAIT_USER_SET = 1,      // the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT: left alone
  SY_OPENMP_WAIT_SET_FIRST = 2,     // GOMP_SPINCOUNT set before libgomp read it
  SY_OPENMP_WAIT_LIBGOMP_FIRST = 3  // libgomp had read its settings already (loaded by another library)
};

int sy_openmp_wait_state(void);

#ifdef __cplusplus
}
#endif
