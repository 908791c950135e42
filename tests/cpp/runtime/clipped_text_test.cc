// Quoting text for messages and JSON: at most a line's worth, cut on a
// character boundary, and always valid UTF-8 (a model file's names may hold
// any bytes; JSON and Python take only UTF-8).
#include "runtime/clipped_text.h"

#include <gtest/gtest.h>

namespace switchyard {
namespace clipped_text_test {

TEST(ValidUtf8, WellFormedTextIsUnchanged) {
  for (const char* text : {"", "plain ascii", "h\xc3\xa9llo", "\xe2\x82\xac", "\xf0\x9f\x98\x80 face"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_EQ(valid_utf8(text), text);
  }
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));  // NUL is UTF-8, and JSON escapes it
}

TEST(ValidUtf8, EachByteThatIsNotPartOfACharacterIsEscaped) {
  EXPECT_EQ(valid_utf8("node\xff"), "node\\xff");
  EXPECT_EQ(valid_utf8("\xc3"), "\\xc3");                     // a lead byte without its continuation
  EXPECT_EQ(valid_utf8("\x80x"), "\\x80x");                   // a lone continuation byte
  EXPECT_EQ(valid_utf8("\xc0\x80"), "\\xc0\\x80");            // an overlong NUL
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");   // a UTF-16 surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
  EXPECT_EQ(valid_utf8("\xe9t\xc3\xa9"), "\\xe9t\xc3\xa9");   // Latin-1 beside UTF-8
  EXPECT_FALSE(is_valid_utf8("node\xff"));
  EXPECT_TRUE(is_valid_utf8(valid_utf8("\xff\xfe\xfd")));
}

TEST(ClippedText, KeepsALinesWorthCutOnACharacter) {
  EXPECT_EQ(clipped_text("short"), "short");
  EXPECT_EQ(clipped_text(std::string(300, 'x')), std::string(200, 'x') + "... (100 more characters)");
  // A two-byte character across the cut is kept out whole, not split.
  std::string text = std::string(199, 'x') + "\xc3\xa9" + "yz";
  EXPECT_EQ(clipped_text(text), std::string(199, 'x') + "... (4 more characters)");
  EXPECT_TRUE(is_valid_utf8(clipped_text(text)));
}

TEST(ClippedText, EscapesWhatAMessageCannotHold) {
  EXPECT_EQ(clipped_text("bad\xff"), "bad\\xff");
  // A NUL would end the C string an exception's what() returns.
  EXPECT_EQ(clipped_text(std::string("a\0b", 3)), "a\\x00b");
}

}  // namespace clipped_text_test
}  // namespace switchyard
