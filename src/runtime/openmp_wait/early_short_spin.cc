// Bounded spinning for libgomp's waiting threads, set before libgomp reads
// its settings.
//
// oneDNN's primitives and the runtime's parallel loops run on libgomp's
// threads. A thread that finishes its share waits for the others, and for
// the next loop, by spinning GOMP_SPINCOUNT rounds (300,000 by default:
// milliseconds) before it blocks. On a machine where another process holds
// a core, the spinning thread takes the time the thread it waits for needs,
// and a two-thread run becomes many times slower than one thread.
// libgomp reads GOMP_SPINCOUNT once, in its own constructor; this library's
// constructor sets it first. It is a separate library with no dependency on
// libgomp, linked into the runtime after libgomp, so the dynamic loader,
// which initialises the later of two unrelated libraries first, runs it
// before libgomp's (runtime/openmp_wait_policy.h says what happens when
// libgomp was initialised earlier, by another library of the process).
#include <dlfcn.h>
#include <stdlib.h>

#include "runtime/openmp_wait/early_short_spin.h"

namespace {

int wait_state = SY_OPENMP_WAIT_UNKNOWN;

// Whether libgomp has read its settings already (another library of the
// process loaded it earlier): its thread count is set by then (the CPUs, or
// OMP_NUM_THREADS), while before its constructor it is the static default,
// 1. Looked up, not opened: dlopen would run libgomp's constructor now.
// Where it cannot tell (one CPU, OMP_NUM_THREADS=1, libgomp not found) it
// says yes, and the runtime bounds the spin the other way.
bool libgomp_initialised() {
  auto max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  auto num_procs = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_num_procs"));
  return !(max_threads && num_procs && max_threads() == 1 && num_procs() > 1);
}

__attribute__((constructor)) void set_short_spin() {
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) {
    wait_state = SY_OPENMP_WAIT_USER_SET;
  } else if (libgomp_initialised()) {
    wait_state = SY_OPENMP_WAIT_LIBGOMP_FIRST;
  } else {
    setenv("GOMP_SPINCOUNT", SY_OPENMP_SHORT_SPIN, 1);
    wait_state = SY_OPENMP_WAIT_SET_FIRST;
  }
}

}  // namespace

extern "C" int sy_openmp_wait_state(void) { return wait_state; }
