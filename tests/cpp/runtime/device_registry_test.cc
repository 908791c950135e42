// The runtime makes each device a manifest names through its kind's factory.
#include "runtime/device_registry.h"
#include "runtime/runtime_error.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace switchyard {
namespace device_registry_test {

TEST(DeviceRegistry, MakesACpuDeviceOnTheGivenPool) {
  const DeviceFactory* cpu = find_device_factory("cpu");
  ASSERT_NE(cpu, nullptr);
  auto pool = std::make_shared<ThreadPool>(2);
  std::unique_ptr<Device> device = cpu->make(3, pool);
  EXPECT_EQ(device->name(), "cpu:3");
  EXPECT_EQ(device->kind(), "cpu");
  EXPECT_TRUE(device->host_accessible());
  EXPECT_EQ(device->num_threads(), pool->num_threads());
}

TEST(DeviceRegistry, AKindThisRuntimeCannotMakeHasNoFactory) {
  EXPECT_EQ(find_device_factory("tpu"), nullptr);
  EXPECT_EQ(find_device_factory(""), nullptr);
}

// Without a driver (here, and on CI) making cuda:N fails naming it; with
// one, it is a GPU the host cannot address, running no host-side work.
TEST(DeviceRegistry, CudaDevicesAreMadeByTheirFactory) {
  const DeviceFactory* cuda = find_device_factory("cuda");
  ASSERT_NE(cuda, nullptr);
  std::unique_ptr<Device> device;
  try {
    device = cuda->make(0, nullptr);
  } catch (const RuntimeError& e) {
    if (std::getenv("SY_REQUIRE_GPU")) FAIL() << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("cuda:0: no GPU can be used: ", 0), 0u) << e.what();
    GTEST_SKIP() << "no GPU: " << e.what();
  }
  EXPECT_EQ(device->name(), "cuda:0");
  EXPECT_FALSE(device->host_accessible());
  EXPECT_THROW(device->parallel_for(4, 1, [](int64_t, int64_t) {}), RuntimeError);
}

}  // namespace device_registry_test
}  // namespace switchyard
