// libgomp's waiting threads (oneDNN's primitives' and the thread pool's
// loops') spin briefly, then block: a thread that spins for a core another
// process holds takes the time the thread it waits for needs.
//
// openmp_wait/early_short_spin.cc sets GOMP_SPINCOUNT before libgomp reads
// it, wherever the runtime brings libgomp into the process (the CLI, a
// program linked with the C API, `import switchyard` first). Where another
// library loaded libgomp earlier (NumPy's OpenBLAS or PyTorch imported
// before switchyard) that is too late, and the runtime uses libgomp's own
// rule instead: with more OpenMP threads than CPUs, a waiting thread spins
// 100 rounds, not GOMP_SPINCOUNT (libgomp's documentation of
// GOMP_SPINCOUNT). It parks one idle team of as many threads as the
// machine has CPUs, once per process, asleep. A user's OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is left alone.
#pragma once

namespace switchyard {

enum class OpenMpWait {
  kUserSetting,  // OMP_WAIT_POLICY or GOMP_SPINCOUNT was set: left as it is
  kShortSpin,    // GOMP_SPINCOUNT was set before libgomp read it
  kParkedTeam,   // libgomp read its settings first; an idle team bounds the spin
  kUnbounded,    // libgomp read its settings first and no team is parked yet
};

// Bounds the spinning before loops or primitives run on several threads
// (ThreadPool's constructor calls it): parks the team where that is needed.
// Thread-safe; parks at most once per process.
void bound_openmp_spinning();

// What bounds the spinning now.
OpenMpWait openmp_wait();

}  // namespace switchyard
