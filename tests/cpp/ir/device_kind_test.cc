// Device kinds are declared once: parsing, printing, default targets, the
// host choice and the operator support all read the one table.
#include <gtest/gtest.h>

#include "ir/compilation_config.h"
#include "ir/device_kind.h"
#include "ir/virtual_device.h"
#include "support/error.h"

namespace switchyard {
namespace {

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
  EXPECT_EQ(find_device_kind("cuda")->operators_not_run, std::vector<std::string_view>{"nn.batch_norm"});
}

}  // namespace
}  // namespace switchyard
