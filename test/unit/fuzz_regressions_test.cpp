// Inputs found by the libFuzzer harnesses (test/fuzz), kept as regression
// tests. Each names the harness, the input and what went wrong.
#include <gtest/gtest.h>

#include <string>

#include "rules/quantity.h"

namespace gpuguard {
namespace {

// fuzz_quantity, input "1000E2147483648" (crash-fdcb85ac...). The exponent
// truncates to int32 like Go (-2147483648) and the value is Go's: 10^2147483651.
// canonical() prints "100e2147483649", an exponent above INT32_MAX, which
// parse() truncates again (to -2147483647): the text re-parses to 1n, not to
// the value, breaking "canonical() always re-parses to an equal value"
// (rules/quantity.h). Fix (rules/quantity.cpp, Quantity::canonical): when the
// multiple-of-3 exponent exceeds 2147483646, move the excess into the
// mantissa as zeros ("100000e2147483646"), which re-parses exactly.
TEST(FuzzRegressions, CanonicalExponentBeyondInt32ReparsesToTheSameValue) {
  for (const char* text : {"1000E2147483648", "1000e2147483648", "1000e-2147483648"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    const auto again = Quantity::parse(q->canonical());
    ASSERT_TRUE(again.has_value()) << text << " -> " << q->canonical();
    EXPECT_EQ(*again, *q) << text << " -> " << q->canonical() << " -> " << again->canonical();
  }
}

// The same family below the limit round-trips today and must keep doing so.
TEST(FuzzRegressions, HugeExponentsWithinInt32RoundTrip) {
  for (const char* text : {"1E2147483648", "1e2147483647", "10e2147483647", "1e-2147483648", "1000e4294967296",
                           "1000E4294967295"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    const auto again = Quantity::parse(q->canonical());
    ASSERT_TRUE(again.has_value()) << text;
    EXPECT_EQ(*again, *q) << text << " -> " << q->canonical();
    EXPECT_EQ(again->canonical(), q->canonical()) << text;
  }
}

// fuzz_quantity, input "\t4687.5Ki" (crash-dc464c19...; a harness bug, not a
// product one). A BinarySI value that is no multiple of 1024 prints as a bare
// integer, as Go's CanonicalizeBytes does; that text re-parses as DecimalSI,
// which prints differently. The value survives; the text need not.
TEST(FuzzRegressions, BinaryValueThatIsNoMultipleOf1024KeepsItsValueNotItsText) {
  const auto q = Quantity::parseTrimmed("\t4687.5Ki");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->canonical(), "4800000");
  const auto again = Quantity::parse(q->canonical());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *q);
  EXPECT_EQ(again->canonical(), "4800k");
  EXPECT_EQ(Quantity::parse(again->canonical()).value(), *q);
}

}  // namespace
}  // namespace gpuguard
