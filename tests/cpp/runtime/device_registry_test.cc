// The runtime makes each device a manifest names through its kind's factory.
#include "runtime/device_registry.h"

#include <gtest/gtest.h>

namespace switchyard {
namespace {

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
  EXPECT_EQ(find_device_factory("cuda"), nullptr);
  EXPECT_EQ(find_device_factory(""), nullptr);
}

}  // namespace
}  // namespace switchyard
