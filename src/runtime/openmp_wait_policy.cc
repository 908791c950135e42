// The short spin, or an idle OpenMP team that makes libgomp spin briefly.
#include "runtime/openmp_wait_policy.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "runtime/openmp_wait/early_short_spin.h"

namespace switchyard {

namespace {

std::once_flag parked_once;
std::atomic<bool> parked{false};

// A thread that leads one team of `threads` + 1 and then sleeps for the
// rest of the process: libgomp keeps the team's threads, asleep, and counts
// them among the threads it manages. Returns the team's size.
int park_team(int threads) {
  std::promise<int> team_made;
  std::future<int> made = team_made.get_future();
  // The thread owns the promise: it may still be inside set_value when get returns.
  std::thread([threads, team_made = std::move(team_made)]() mutable {
    std::atomic<int> members{0};  // also keeps the compiler from removing an empty region
#pragma omp parallel num_threads(threads + 1)
    members.fetch_add(1, std::memory_order_relaxed);
    team_made.set_value(members.load());
    std::promise<void>().get_future().wait();  // never set: the team stays
  }).detach();
  return made.get();
}

}  // namespace

void bound_openmp_spinning() {
  if (sy_openmp_wait_state() != SY_OPENMP_WAIT_LIBGOMP_FIRST) return;
  std::call_once(parked_once, [] {
    // More than libgomp's available CPUs (the process's affinity when it
    // loaded), whatever the affinity is now.
    int cpus = std::max<int>(omp_get_num_procs(), int(std::thread::hardware_concurrency()));
    parked.store(park_team(cpus) > cpus);
  });
}

OpenMpWait openmp_wait() {
  switch (sy_openmp_wait_state()) {
    case SY_OPENMP_WAIT_USER_SET: return OpenMpWait::kUserSetting;
    case SY_OPENMP_WAIT_SET_FIRST: return OpenMpWait::kShortSpin;
    default: break;
  }
  return parked.load() ? OpenMpWait::kParkedTeam : OpenMpWait::kUnbounded;
}

}  // namespace switchyard
