// How much of its speed alone each core keeps while all of them compute at
// once: about 1 where they are cores of their own, about 1/2 where two of
// them are one physical core at the time (the hardware threads of one core,
// a virtual machine's two vCPUs scheduled on one core) or another load holds
// them. `switchyard profile` measures each device's kernels alone and
// plans on the assumption that the devices' cores run at once; a profile
// taken while they cannot would steer a latency build towards one device,
// so the profile probes this and says so (bench/peers/core_share.py is the
// benchmarks' probe of the same thing).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace switchyard {

struct CoreShare {
  std::vector<int> cores;
  std::vector<double> alone;     // by core: rounds of arithmetic per second, alone
  std::vector<double> together;  // by core: the same, every core at once

  // The smallest share a core kept (together / alone); 1 with fewer than two cores.
  double least() const;
  // The slowest core's rate alone over the fastest's: well below 1 where
  // another load held a core (each device's kernels were then measured at
  // a different speed than they will run at).
  double slowest_alone() const;
  // "cores 0 and 1 at once keep 0.98 and 0.99 of their speed alone"
  std::string text() const;
  // "core 1 alone ran at 0.52 of core 0's speed"
  std::string alone_text() const;
};

// Runs a loop of floating-point arithmetic (the FMA units' work, which two
// hardware threads of one core share) on each core alone for `window`, then
// on all at once. Throws RuntimeError when a thread cannot run on its core.
CoreShare measure_core_share(const std::vector<int>& cores, std::chrono::milliseconds window);

// The share below which `profile` warns that its costs may mislead.
constexpr double kLeastCoreShare = 0.8;

}  // namespace switchyard
