// rules/k8s/go_strconv: Go's strconv.ParseInt / ParseUint, as the scheduler
// (base 10: Gt/Lt values, toleration seconds) and go-yaml (base 0: plain
// scalars) call them.
#include "rules/k8s/go_strconv.h"

#include <gtest/gtest.h>

namespace gpuguard {
namespace {

TEST(ParseGoIntBase10, TakesAnOptionalSignAndDecimalDigits) {
  EXPECT_EQ(parseGoInt("550"), 550);
  EXPECT_EQ(parseGoInt("+7"), 7);
  EXPECT_EQ(parseGoInt("-12"), -12);
  EXPECT_EQ(parseGoInt("007"), 7);  // leading zeros are decimal in base 10
}

TEST(ParseGoIntBase10, RejectsWhatStrconvRejects) {
  for (const char* text : {"", "+", "-", " 1", "1 ", "1.5", "12.4", "0x10", "1_000", "1e3", "++1"}) {
    EXPECT_FALSE(parseGoInt(text).has_value()) << text;
  }
}

TEST(ParseGoIntBase10, CoversExactlyTheInt64Range) {
  EXPECT_EQ(parseGoInt("9223372036854775807"), 9223372036854775807LL);
  EXPECT_EQ(parseGoInt("-9223372036854775808"), -9223372036854775807LL - 1);
  EXPECT_FALSE(parseGoInt("9223372036854775808").has_value());
  EXPECT_FALSE(parseGoInt("-9223372036854775809").has_value());
}

TEST(ParseGoIntBase0, ReadsTheBaseFromThePrefixAsGoYamlDoes) {
  EXPECT_EQ(parseGoInt("0x1F", 0), 31);
  EXPECT_EQ(parseGoInt("0o17", 0), 15);
  EXPECT_EQ(parseGoInt("017", 0), 15);  // a leading 0 is octal
  EXPECT_EQ(parseGoInt("0b101", 0), 5);
  EXPECT_EQ(parseGoInt("-0x10", 0), -16);
  EXPECT_EQ(parseGoInt("0", 0), 0);
  EXPECT_FALSE(parseGoInt("0x", 0).has_value());  // a prefix needs a digit after it
  EXPECT_FALSE(parseGoInt("08", 0).has_value());  // 8 is no octal digit
}

TEST(ParseGoUint, TakesNoSignAndTheWholeUint64Range) {
  EXPECT_EQ(parseGoUint("18446744073709551615"), 18446744073709551615ULL);
  EXPECT_FALSE(parseGoUint("18446744073709551616").has_value());
  EXPECT_FALSE(parseGoUint("-1").has_value());
  EXPECT_FALSE(parseGoUint("+1").has_value());
}

}  // namespace
}  // namespace gpuguard
