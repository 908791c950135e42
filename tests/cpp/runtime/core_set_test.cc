// Core sets of CPU devices (runtime/core_set.h): parsing, the errors that
// name the device and core, the manifest's checks, and a queue worker pinned
// to a core whose OpenMP team stays there.
#include "runtime/core_set.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>

#include "runtime/device_queues.h"
#include "runtime/manifest.h"
#include "runtime/runtime_error.h"
#include "runtime/thread_pool.h"

namespace switchyard {
namespace core_set_test {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CoreSet, ParsesRangesAndListsAndPrintsThemBack) {
  EXPECT_EQ(parse_core_set("0-3,6", "cpu:0"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(parse_core_set("5,1", "cpu:0"), (std::vector<int>{1, 5}));
  EXPECT_EQ(parse_device_cores("cpu:1=2-3"), (std::pair<std::string, std::vector<int>>{"cpu:1", {2, 3}}));
  EXPECT_EQ(core_set_text({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
}

TEST(CoreSet, MalformedTextIsRefusedNamingTheDevice) {
  EXPECT_EQ(error_of([] { parse_core_set("", "cpu:1"); }),
            "core set '' of cpu:1: expected a core number at character 1 (e.g. 0-3,6)");
  EXPECT_EQ(error_of([] { parse_core_set("0-", "cpu:1"); }),
            "core set '0-' of cpu:1: expected a core number at character 3 (e.g. 0-3,6)");
  EXPECT_EQ(error_of([] { parse_core_set("1x", "cpu:1"); }),
            "core set '1x' of cpu:1: unexpected 'x' at character 2 (e.g. 0-3,6)");
  EXPECT_EQ(error_of([] { parse_core_set("3-1", "cpu:1"); }), "core set '3-1' of cpu:1: range 3-1 runs backwards");
  EXPECT_EQ(error_of([] { parse_core_set("0-2,1", "cpu:1"); }), "core set '0-2,1' of cpu:1 names core 1 twice");
  EXPECT_EQ(error_of([] { parse_core_set("99999999999", "cpu:1"); }),
            "core set '99999999999' of cpu:1: the core at character 1 is above the highest core a set may name (1023)");
  EXPECT_EQ(error_of([] { parse_device_cores("cpu:1"); }), "'cpu:1': expected DEVICE=CORES, e.g. cpu:0=0-3");
}

std::vector<ManifestDevice> two_cpus() {
  std::vector<ManifestDevice> devices(2);
  for (int i = 0; i < 2; ++i) {
    devices[size_t(i)].kind = "cpu";
    devices[size_t(i)].id = i;
    devices[size_t(i)].name = "cpu:" + std::to_string(i);
    devices[size_t(i)].target = "cpu";
  }
  return devices;
}

TEST(CoreSet, DevicesGetTheirCoresAndAsManyThreadsAndNeverShareACore) {
  std::vector<ManifestDevice> devices = two_cpus();
  devices[1].threads = 3;  // the manifest's own threads stay
  apply_device_cores(devices, {{"cpu:0", {0, 1}}, {"cpu:1", {2}}});
  EXPECT_EQ(devices[0].cores, (std::vector<int>{0, 1}));
  EXPECT_EQ(devices[0].threads, 2);
  EXPECT_EQ(devices[1].threads, 3);
  // Cores given again (at load) replace them, threads following the count.
  apply_device_cores(devices, {{"cpu:0", {0, 1, 3}}});
  EXPECT_EQ(devices[0].threads, 3);
  EXPECT_EQ(error_of([&] { apply_device_cores(devices, {{"cpu:1", {1}}}); }),
            "core 1 is in the core sets of both cpu:0 and cpu:1 (devices that run at once need cores of their own)");
  EXPECT_EQ(error_of([&] { apply_device_cores(devices, {{"cpu:7", {5}}}); }),
            "cores for cpu:7, which is not a device of this model (its devices: cpu:0, cpu:1)");
}

TEST(CoreSet, ACoreOutsideTheProcessMaskIsNamed) {
  EXPECT_EQ(cores_not_allowed("cpu:0", {0}), "");  // every process may run on some core; core 0 here
  EXPECT_NE(cores_not_allowed("cpu:1", {kMaxCore}).find("cpu:1: core 1023 is not a core this process may run on"),
            std::string::npos);
}

// The worker runs on its core, and so does every thread of the OpenMP team
// it leads (threads inherit their creator's mask).
TEST(CoreSet, AQueueWorkerAndItsOpenMpTeamRunOnItsCores) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int core = 0;
  while (core < CPU_SETSIZE && !CPU_ISSET(core, &allowed)) ++core;
  QueueWorkers workers(std::vector<std::vector<int>>{{core}});
  std::atomic<int> outside{0}, team{0};
  workers.run([&](int) {
    openmp_parallel_for(2, 2, [&](int64_t) {
      cpu_set_t mask;
      sched_getaffinity(0, sizeof mask, &mask);
      if (CPU_COUNT(&mask) != 1 || !CPU_ISSET(core, &mask)) ++outside;
      ++team;
    });
  });
  EXPECT_EQ(team.load(), 2);
  EXPECT_EQ(outside.load(), 0);
}

}  // namespace core_set_test
}  // namespace switchyard
