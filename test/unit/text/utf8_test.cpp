// text/utf8.h: the one UTF-8 decoder the webhook, the YAML loader and the
// linter share. Valid means RFC 3629: shortest form, no surrogates, at most
// U+10FFFF.
#include "text/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuguard::utf8 {
namespace {

TEST(Utf8, DecodesOneToFourByteCharacters) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  EXPECT_EQ(decode(s, 0).codePoint, U'a');
  EXPECT_EQ(decode(s, 1).codePoint, U'\u00E9');
  EXPECT_EQ(decode(s, 1).length, 2);
  EXPECT_EQ(decode(s, 3).codePoint, U'\u20AC');
  EXPECT_EQ(decode(s, 3).length, 3);
  EXPECT_EQ(decode(s, 6).codePoint, U'\U0001F600');
  EXPECT_EQ(decode(s, 6).length, 4);
}

TEST(Utf8, NamesWhyASequenceIsInvalid) {
  EXPECT_EQ(decode("\x80", 0).error, Error::BadLeadByte);
  EXPECT_EQ(decode("\xC1\xBF", 0).error, Error::BadLeadByte);  // overlong 2-byte forms have no valid lead
  EXPECT_EQ(decode("\xF5\x80\x80\x80", 0).error, Error::BadLeadByte);
  EXPECT_EQ(decode("\xE2\x82", 0).error, Error::Truncated);
  EXPECT_EQ(decode("\xE2\x28\xA1", 0).error, Error::MissingContinuation);
  EXPECT_EQ(decode("\xE0\x9F\xBF", 0).error, Error::OverlongOrOutOfRange);
  EXPECT_EQ(decode("\xF4\x90\x80\x80", 0).error, Error::OverlongOrOutOfRange);
  const Decoded surrogate = decode("\xED\xA0\x80", 0);
  EXPECT_EQ(surrogate.error, Error::Surrogate);
  EXPECT_EQ(surrogate.codePoint, 0xD800u);
  EXPECT_EQ(surrogate.length, 0);
}

TEST(Utf8, ValidPrefixStopsAtTheFirstInvalidByte) {
  EXPECT_EQ(validPrefix("plain ascii text, longer than eight bytes"), 41u);
  EXPECT_EQ(validPrefix("0123456789\xC3\xA9x\xFFyz"), 13u);
  EXPECT_TRUE(isValid("\xF4\x8F\xBF\xBF"));
  EXPECT_FALSE(isValid("abcdefgh\xED\xBF\xBF"));
  EXPECT_TRUE(isValid(""));
}

TEST(Utf8, AppendEncodesEveryScalarValue) {
  for (char32_t cp : {U'\0', U'\x7F', U'\x80', U'\u07FF', U'\u0800', U'\uFFFF', U'\U00010000', U'\U0010FFFF'}) {
    std::string s;
    append(s, cp);
    const Decoded d = decode(s, 0);
    EXPECT_EQ(d.error, Error::None);
    EXPECT_EQ(d.codePoint, cp);
    EXPECT_EQ(d.length, s.size());
  }
}

}  // namespace
}  // namespace gpuguard::utf8
