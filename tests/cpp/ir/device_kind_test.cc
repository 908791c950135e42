// Device kinds are declared once: parsing, printing, default targets, the
// host choice and the operator support all read the one table.
#include <gtest/gtest.h>

#include "ir/compilation_config.h"
#include "ir/device_kind.h"
#include "ir/virtual_device.h"
#include "support/error.h"

namespace switchyard {
namespace device_kind_test {

TEST(DeviceKind, EveryDeclaredKindParsesPrintsAndHasItsDefaultTarget) {
  for (const DeviceKindInfo& k : device_kinds()) {
    EXPECT_EQ(find_device_kind(k.name), &k);
    EXPECT_EQ(device_kind_info(k.kind), &k);
    EXPECT_STREQ(device_kind_name(k.kind), k.name);
    const VirtualDevice* vd = VirtualDevice::parse(std::string(k.name) + ":2");
    EXPECT_EQ(vd->kind(), k.kind);
    EXPECT_EQ(vd->target(), Target::get(k.name));
    EXPECT_EQ(vd->str(), std::string(k.name) + ":2");
  }
  EXPECT_EQ(find_device_kind("tpu"), nullptr);
  EXPECT_EQ(device_kind_info(DeviceKind::kUnconstrained), nullptr);
  EXPECT_STREQ(device_kind_name(DeviceKind::kUnconstrained), "?");
}

TEST(DeviceKind, MessagesListTheDeclaredKinds) {
  EXPECT_EQ(device_kind_names(" or "), "cpu or cuda");
  EXPECT_EQ(device_kind_names(", "), "cpu, cuda");
  try {
    VirtualDevice::parse("tpu:0");
    FAIL() << "parsed an unknown kind";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "malformed device \"tpu:0\": unknown device kind 'tpu' (expected cpu or cuda)");
  }
  try {
    Target::get("tpu -x");
    FAIL() << "parsed an unknown target kind";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "unknown target kind 'tpu' in target \"tpu -x\" (expected cpu or cuda)");
  }
}

TEST(DeviceKind, TheHostIsTheFirstDeviceWhoseKindCanBeTheHost) {
  EXPECT_TRUE(find_device_kind("cpu")->can_be_host);
  EXPECT_FALSE(find_device_kind("cuda")->can_be_host);
  EXPECT_EQ(CompilationConfig::parse("cuda:0,cpu:3").host_device->device_name(), "cpu:3");
  EXPECT_TRUE(find_device_kind("cpu")->operators_not_run.empty());
  EXPECT_EQ(find_device_kind("cuda")->operators_not_run,
            (std::vector<std::string_view>{"nn.batch_norm", "cumsum", "topk_indices"}));
}

// A build whose devices cannot be the host (cuda:0 alone) gets cpu:0 as its
// host, as TVM adds a host target; asking for such a device as the host is
// an error that says what to do (issue 39: the entry was compiled for
// cuda:0's target and the build crashed).
TEST(DeviceKind, DevicesThatCannotBeTheHostGetCpu0AsTheirHost) {
  CompilationConfig config = CompilationConfig::parse("cuda:0");
  ASSERT_EQ(config.devices.size(), 2u);
  EXPECT_EQ(config.devices[0]->device_name(), "cuda:0");
  EXPECT_EQ(config.devices[1]->device_name(), "cpu:0");
  EXPECT_EQ(config.default_device->device_name(), "cuda:0");
  EXPECT_EQ(config.host_device, config.devices[1]);
  EXPECT_EQ(config.to_string(), "cuda:0, cpu:0 (default cuda:0, host cpu:0)");
  // Planned modules keep the list, host included, so a re-plan finds it again.
  EXPECT_EQ(CompilationConfig::from_devices(config.devices).host_device, config.host_device);
  EXPECT_EQ(CompilationConfig::parse("cuda:0", "", "cpu:0").host_device->device_name(), "cpu:0");
  EXPECT_EQ(CompilationConfig::parse("cuda:0,cuda:1").devices.size(), 3u);
  for (const char* host : {"cuda:0", "cuda"}) {
    try {
      CompilationConfig::parse("cuda:0,cpu:1", "", host);
      FAIL() << "cuda:0 accepted as the host";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(e.message(),
                "cuda:0 cannot be the host (the host runs the entry's control flow and stages its inputs and outputs): "
                "name a cpu device, or leave the host out (the first cpu listed, or cpu:0 added where none is)");
    }
  }
}

}  // namespace device_kind_test
}  // namespace switchyard
