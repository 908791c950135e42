// The IR's layout vocabulary: what parses, how it is named, and that a
// virtual device refuses a name that is no layout.
#include <gtest/gtest.h>

#include "ir/layout.h"
#include "ir/virtual_device.h"
#include "support/error.h"

namespace switchyard {
namespace layout_test {

TEST(Layout, TheVocabularyParsesAndNamesItself) {
  EXPECT_TRUE(Layout::parse("")->plain());
  EXPECT_TRUE(Layout::parse("nhwc")->channels_last());
  for (int block : {2, 8, 16, 64}) {
    std::string name = "nChw" + std::to_string(block) + "c";
    std::optional<Layout> layout = Layout::parse(name);
    ASSERT_TRUE(layout) << name;
    EXPECT_TRUE(layout->channel_blocked());
    EXPECT_EQ(layout->channel_block, block);
    EXPECT_EQ(layout->name(), name);
  }
  EXPECT_EQ(Layout::parse("nhwc")->name(), "nhwc");
}

TEST(Layout, NamesThatAreNoLayoutAreRefused) {
  for (const char* name : {"NCHW", "nchw", "nChwc", "nChw0c", "nChw1c", "nChw65c", "nChw016c", "nChw16", "nChw+8c",
                           "abc", "nChw16cx"})
    EXPECT_FALSE(Layout::parse(name)) << name;
  EXPECT_TRUE(Layout::of("bogus").plain());
}

TEST(Layout, AVirtualDeviceWithANameThatIsNoLayoutIsAParseError) {
  EXPECT_EQ(VirtualDevice::parse("device=\"cpu:0\", layout=\"nChw16c\"")->layout(), "nChw16c");
  try {
    VirtualDevice::parse("device=\"cpu:0\", layout=\"NCHW\"");
    FAIL() << "NCHW was taken as a layout";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("layout 'NCHW' is not a layout (nhwc (channels last), or nChw<N>c"), std::string::npos)
        << e.message();
  }
}

}  // namespace layout_test
}  // namespace switchyard
