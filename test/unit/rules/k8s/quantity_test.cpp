// gpuguard::Quantity must behave exactly like k8s.io/apimachinery
// resource.Quantity. The expectations below come from
// ../shared/reference/kubernetes-gpu-semantics.md §1 (tables verified by
// running the real Go code) and from reading quantity.go / suffix.go.
//
// Values are checked against an independent, deliberately naive big-decimal
// reference (RefValue below): it turns a quantity string into its exact
// value in nano units as a decimal digit string.

#include "rules/k8s/quantity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace {

using gpuguard::Quantity;
using gpuguard::QuantityError;

// ---------------------------------------------------------------------------
// Reference arithmetic: non-negative integers as decimal strings ("0" is
// zero, no leading zeros otherwise). Slow and obvious on purpose.

std::string stripZeros(std::string s) {
  const auto nz = s.find_first_not_of('0');
  return nz == std::string::npos ? "0" : s.substr(nz);
}

std::string mulSmall(const std::string& a, unsigned m) {
  std::string out(a.size(), '0');
  unsigned long long carry = 0;
  for (std::size_t i = a.size(); i > 0; --i) {
    const unsigned long long v = static_cast<unsigned long long>(a[i - 1] - '0') * m + carry;
    out[i - 1] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    out.insert(out.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  return stripZeros(out);
}

std::string addOne(const std::string& a) {
  std::string out = a;
  for (std::size_t i = out.size(); i > 0; --i) {
    if (out[i - 1] != '9') {
      ++out[i - 1];
      return out;
    }
    out[i - 1] = '0';
  }
  return "1" + out;
}

std::string timesPow10(const std::string& a, std::size_t n) {
  return a == "0" ? a : a + std::string(n, '0');
}

// ceil(a / 10^n)
std::string ceilDivPow10(const std::string& a, std::size_t n) {
  if (a == "0" || n == 0) return a;
  if (n >= a.size()) return "1";
  const std::string head = a.substr(0, a.size() - n);
  const bool exact = a.find_first_not_of('0', a.size() - n) == std::string::npos;
  return stripZeros(exact ? head : addOne(head));
}

int cmpNat(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

struct RefValue {
  bool negative = false;
  std::string nano = "0";  // |value| * 10^9, exact after Go's nano round-up
};

int cmpRef(const RefValue& a, const RefValue& b) {
  const int sa = a.nano == "0" ? 0 : (a.negative ? -1 : 1);
  const int sb = b.nano == "0" ? 0 : (b.negative ? -1 : 1);
  if (sa != sb) return sa < sb ? -1 : 1;
  const int c = cmpNat(a.nano, b.nano);
  return sa < 0 ? -c : c;
}

bool operator==(const RefValue& a, const RefValue& b) { return cmpRef(a, b) == 0; }

std::ostream& operator<<(std::ostream& os, const RefValue& v) {
  return os << (v.negative ? "-" : "") << v.nano << "n";
}

// Reference value of a quantity in the strict grammar
// [+-]? digits? ('.' digits?)? suffix, where suffix is a decimal SI suffix, a
// binary SI suffix or e/E followed by a small signed integer. Plain decimal
// numbers ("0.9999", "-1") are a special case. No int32 quirks here.
RefValue refValue(std::string_view s) {
  RefValue r;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) r.negative = s[i++] == '-';
  std::string digits;
  std::size_t fracLen = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') digits += s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      digits += s[i++];
      ++fracLen;
    }
  }
  const std::string_view suffix = s.substr(i);
  long long exp10 = 0;
  int exp2 = 0;
  static const std::pair<std::string_view, int> kDec[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::pair<std::string_view, int> kBin[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool found = false;
  for (const auto& [name, e] : kDec) {
    if (suffix == name) {
      exp10 = e;
      found = true;
    }
  }
  for (const auto& [name, e] : kBin) {
    if (suffix == name) {
      exp2 = e;
      found = true;
    }
  }
  if (!found) {
    EXPECT_TRUE(suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) << s;
    exp10 = std::stoll(std::string(suffix.substr(1)));
  }
  std::string mag = stripZeros(digits.empty() ? "0" : digits);
  for (int k = 0; k < exp2; ++k) mag = mulSmall(mag, 2);
  const long long shift = 9 + exp10 - static_cast<long long>(fracLen);
  mag = shift >= 0 ? timesPow10(mag, static_cast<std::size_t>(shift))
                   : ceilDivPow10(mag, static_cast<std::size_t>(-shift));
  if (exp2 > 0) {
    const std::string cap = "9223372036854775807000000000";  // (2^63-1) * 10^9
    if (cmpNat(mag, cap) > 0) mag = cap;
  }
  r.nano = mag;
  if (mag == "0") r.negative = false;
  return r;
}

// The value as the Quantity itself reports it, read back through the
// reference: canonical() must be an exact rendering of the value.
RefValue valueOf(const Quantity& q) { return refValue(q.canonical()); }

Quantity mustParse(std::string_view s) {
  QuantityError err = QuantityError::None;
  auto q = Quantity::parse(s, &err);
  EXPECT_TRUE(q.has_value()) << "'" << s << "' failed with " << static_cast<int>(err);
  return q.value_or(Quantity{});
}

// Reference: RoundUp(-3) then MilliValue() % 1000 == 0.
bool refIntegerAfterDefaulting(const RefValue& v) {
  const std::string milli = ceilDivPow10(v.nano, 6);
  return milli == "0" || (milli.size() > 3 && milli.compare(milli.size() - 3, 3, "000") == 0);
}

bool refWhole(const RefValue& v) {
  return v.nano == "0" || (v.nano.size() > 9 && v.nano.compare(v.nano.size() - 9, 9, "000000000") == 0);
}

// ---------------------------------------------------------------------------
// The reference tables (§1.5, §1.6 and the statements of §0 and §1.2-1.4).

struct Row {
  std::string_view input;
  QuantityError error;          // None: parses
  std::string_view value;       // exact value as a plain decimal
  std::string_view canonical;   // String() after CanonicalizeBytes, cache ignored
  std::string_view defaulted;   // canonical() after RoundUp(-3)
  bool integer;                 // MilliValue()%1000 == 0 after defaulting
};

constexpr QuantityError kOk = QuantityError::None;
constexpr QuantityError kFormat = QuantityError::FormatWrong;
constexpr QuantityError kSuffix = QuantityError::Suffix;
constexpr QuantityError kNumeric = QuantityError::Numeric;

// Rows marked "cached" are emitted verbatim by the API server (§1.4); the
// canonical column is what CanonicalizeBytes would produce.
const Row kTable[] = {
    // §1.5, in table order.
    {"1", kOk, "1", "1", "1", true},
    {"1.0", kOk, "1", "1", "1", true},
    {"1.000", kOk, "1", "1", "1", true},
    {"1000m", kOk, "1", "1", "1", true},
    {"2000m", kOk, "2", "2", "2", true},
    {"500m", kOk, "0.5", "500m", "500m", false},
    {"0.5", kOk, "0.5", "500m", "500m", false},
    {".5", kOk, "0.5", "500m", "500m", false},
    {"1.", kOk, "1", "1", "1", true},  // cached "1."
    {"1.5", kOk, "1.5", "1500m", "1500m", false},
    {"1e3", kOk, "1000", "1e3", "1e3", true},
    {"1E3", kOk, "1000", "1e3", "1e3", true},  // cached "1E3"
    {"1e+3", kOk, "1000", "1e3", "1e3", true},  // cached "1e+3"
    {"1e-3", kOk, "0.001", "1e-3", "1e-3", false},
    {"1e0", kOk, "1", "1", "1", true},  // cached "1e0"
    {"1.5e0", kOk, "1.5", "1500e-3", "1500e-3", false},
    {"+1", kOk, "1", "1", "1", true},  // cached "+1"
    {"-1", kOk, "-1", "-1", "-1", true},  // integer, but the API rejects it as negative
    {"01", kOk, "1", "1", "1", true},  // cached "01"
    {"1k", kOk, "1000", "1k", "1k", true},
    {"1K", kSuffix, "", "", "", false},
    {"1Ki", kOk, "1024", "1Ki", "1Ki", true},
    {"1Mi", kOk, "1048576", "1Mi", "1Mi", true},
    {"1M", kOk, "1000000", "1M", "1M", true},
    {"1m", kOk, "0.001", "1m", "1m", false},
    {"1u", kOk, "0.000001", "1u", "1m", false},
    {"1n", kOk, "0.000000001", "1n", "1m", false},
    {"0", kOk, "0", "0", "0", true},
    {"00", kOk, "0", "0", "0", true},
    {"-0", kOk, "0", "0", "0", true},
    {".", kOk, "0", "0", "0", true},
    {"+", kOk, "0", "0", "0", true},
    {"-", kOk, "0", "0", "0", true},
    {" 1", kFormat, "", "", "", false},
    {"1 ", kFormat, "", "", "", false},
    {"", kFormat, "", "", "", false},
    {"0x1", kFormat, "", "", "", false},
    {"1e", kSuffix, "", "", "", false},
    {"1E", kOk, "1000000000000000000", "1E", "1E", true},  // Go: MilliValue overflows
    {"1ki", kSuffix, "", "", "", false},
    {"1,000", kFormat, "", "", "", false},
    {"1_000", kFormat, "", "", "", false},
    {"1 GPU", kFormat, "", "", "", false},
    {"0.9999", kOk, "0.9999", "999900u", "1", true},
    {"2.9995", kOk, "2.9995", "2999500u", "3", true},
    {"1.0001", kOk, "1.0001", "1000100u", "1001m", false},
    {"100u", kOk, "0.0001", "100u", "1m", false},
    {"1e-9", kOk, "0.000000001", "1e-9", "1e-3", false},
    {"0.5n", kOk, "0.000000001", "1n", "1m", false},
    {"8Ei", kOk, "9223372036854775807", "9223372036854775807", "9223372036854775807", true},
    {"..", kFormat, "", "", "", false},
    {"1.5.", kFormat, "", "", "", false},
    {"1e1.5", kFormat, "", "", "", false},
    {"1e3k", kFormat, "", "", "", false},
    {"1m3", kSuffix, "", "", "", false},
    {"1Kii", kSuffix, "", "", "", false},
    // §0 / §1.2 / §1.4: more accepted oddities and the cached spellings.
    {"-.", kOk, "0", "0", "0", true},
    {"000", kOk, "0", "0", "0", true},
    {"0001", kOk, "1", "1", "1", true},  // cached "0001"
    {"1e03", kOk, "1000", "1e3", "1e3", true},  // cached "1e03"
    {"1e-0", kOk, "1", "1", "1", true},  // cached "1e-0"
    {"1.G", kOk, "1000000000", "1G", "1G", true},  // "we currently allow 1.G"
    {"1\xC2\xB5", kFormat, "", "", "", false},  // "1µ": only ASCII u is micro
    {"1u ", kFormat, "", "", "", false},
    {"1KI", kFormat, "", "", "", false},  // 'I' is not a suffix character
    {"1kI", kFormat, "", "", "", false},
    {"1e--3", kFormat, "", "", "", false},  // one sign only
    {"1e+", kSuffix, "", "", "", false},
    {"1x", kFormat, "", "", "", false},
    {"1.5e3", kOk, "1500", "1500", "1500", true},  // Exponent form: 1500e0 prints bare
    // §1.3 canonical examples.
    {"1000", kOk, "1000", "1k", "1k", true},
    {"1e19", kOk, "10000000000000000000", "10e18", "10e18", true},
    {"1.5Gi", kOk, "1610612736", "1536Mi", "1536Mi", true},
    {"1024Mi", kOk, "1073741824", "1Gi", "1Gi", true},
    {"1000E", kOk, "1000000000000000000000", "1e21", "1e21", true},  // newer revision
    {"1023", kOk, "1023", "1023", "1023", true},
    {"0.5Ki", kOk, "512", "512", "512", true},  // BinarySI below 1024 prints as DecimalSI
    {"1.5Ki", kOk, "1536", "1536", "1536", true},
    {"0.0001Ki", kOk, "0.1024", "102400u", "103m", false},
    // §1.6 JSON numbers (their raw token text is parsed as a quantity).
    {"2.0", kOk, "2", "2", "2", true},
    {"-1.5", kOk, "-1.5", "-1500m", "-1500m", false},
    {"true", kFormat, "", "", "", false},
    {"{}", kFormat, "", "", "", false},
    {"[1]", kFormat, "", "", "", false},
    {"null", kFormat, "", "", "", false},  // JSON null is handled before ParseQuantity
    {"1\\n", kFormat, "", "", "", false},
    {"\\u0031", kFormat, "", "", "", false},
    // The CRD pattern differs from ParseQuantity (§1.6).
    {"1.5e1.5", kFormat, "", "", "", false},
};

void PrintTo(const Row& row, std::ostream* os) { *os << "\"" << row.input << "\""; }

class QuantityTable : public ::testing::TestWithParam<Row> {};

TEST_P(QuantityTable, MatchesApiServer) {
  const Row& row = GetParam();
  QuantityError err = QuantityError::FormatWrong;
  const auto q = Quantity::parse(row.input, &err);
  EXPECT_EQ(err, row.error);
  if (row.error != kOk) {
    EXPECT_FALSE(q.has_value());
    return;
  }
  ASSERT_TRUE(q.has_value());
  // Exact value, through the independent reference and through comparison.
  EXPECT_EQ(valueOf(*q), refValue(row.value));
  EXPECT_EQ(*q, mustParse(row.value));
  EXPECT_EQ(q->canonical(), row.canonical);
  EXPECT_EQ(q->defaulted().canonical(), row.defaulted);
  EXPECT_EQ(q->isIntegerAfterDefaulting(), row.integer);
  EXPECT_EQ(q->isZero(), refValue(row.value).nano == "0");
  EXPECT_EQ(q->isNegative(), row.value.front() == '-');
  // The canonical text means the same value.
  EXPECT_EQ(mustParse(row.canonical), *q);
}

INSTANTIATE_TEST_SUITE_P(Reference, QuantityTable, ::testing::ValuesIn(kTable),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return "row" + std::to_string(info.index);
                         });

TEST(QuantityTableSize, HasAtLeastSixtyRows) {
  EXPECT_GE(std::size(kTable), 60u);
}

// ---------------------------------------------------------------------------

TEST(QuantityErrors, MessagesAreTheApiServersText) {
  EXPECT_EQ(gpuguard::quantityErrorMessage(kFormat),
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  EXPECT_EQ(gpuguard::quantityErrorMessage(kSuffix), "unable to parse quantity's suffix");
  EXPECT_EQ(gpuguard::quantityErrorMessage(kNumeric), "unable to parse numeric part of quantity");
  EXPECT_EQ(gpuguard::quantityErrorMessage(kOk), "");
}

TEST(QuantityErrors, ErrorPointerIsOptionalAndResetOnSuccess) {
  EXPECT_FALSE(Quantity::parse("1K").has_value());
  QuantityError err = QuantityError::Suffix;
  EXPECT_TRUE(Quantity::parse("1", &err).has_value());
  EXPECT_EQ(err, kOk);
}

// Go's scanner is more lenient than its own regular expression: a missing
// number reads as "0" and the suffix is still looked up.
TEST(QuantityParse, DigitlessNumbersAreZero) {
  for (std::string_view s : {"k", "Ki", "Mi", "Gi", "Ti", "E", "e5", "-e5", "+.m", ".Ki", "-.Ti",
                             "n", ".e-9"}) {
    SCOPED_TRACE(s);
    const auto q = mustParse(s);
    EXPECT_TRUE(q.isZero());
    EXPECT_EQ(q.canonical(), "0");
  }
}

// When Go's int64 fast path is not taken (below nano, or a binary exponent
// whose precision estimate 15 - len(num) - exponent*3/10 - 1 is negative),
// inf.Dec.SetString needs a digit: ErrNumeric.
TEST(QuantityParse, DigitlessOffTheFastPathIsNumericError) {
  for (std::string_view s : {"e-10", ".e-10", "+e-10", "-.e-12", "Pi", "Ei", "-Ei", "+.Pi", ".Ei"}) {
    QuantityError err = kOk;
    EXPECT_FALSE(Quantity::parse(s, &err).has_value()) << s;
    EXPECT_EQ(err, kNumeric) << s;
  }
  EXPECT_TRUE(mustParse("0e-10").isZero());
  EXPECT_TRUE(mustParse(".0e-10").isZero());
  EXPECT_TRUE(mustParse("0Ei").isZero());
  EXPECT_TRUE(mustParse("-0.Pi").isZero());
}

TEST(QuantityParse, SuffixLookupFollowsSuffixHandler) {
  // Table suffixes only; then e/E + strconv.ParseInt (sign, leading zeros).
  EXPECT_EQ(mustParse("1E+3"), mustParse("1000"));
  EXPECT_EQ(mustParse("1e-03"), mustParse("1m"));
  EXPECT_EQ(mustParse("1e0003"), mustParse("1k"));
  for (std::string_view s : {"+-1", "--1", "1-", "1+5", "1Ee3", "1ee", "1Kie3", "1iK",
                             "1mi", "1ei", "1e9223372036854775808",
                             "1e-9223372036854775809"}) {
    QuantityError err = kOk;
    EXPECT_FALSE(Quantity::parse(s, &err).has_value()) << s;
    EXPECT_EQ(err, kSuffix) << s;
  }
}

// suffix.go returns int32(parsed): in-range int64 exponents wrap to int32.
TEST(QuantityParse, ExponentIsTruncatedToInt32LikeGo) {
  EXPECT_EQ(mustParse("1e4294967296"), mustParse("1"));
  EXPECT_EQ(mustParse("1e4294967299"), mustParse("1k"));
  EXPECT_EQ(mustParse("1e9223372036854775807"), mustParse("100m"));  // int32 -1
  EXPECT_EQ(mustParse("1e-9223372036854775808"), mustParse("1"));    // int32 0
  // 999999999999 wraps to -727379969: a tiny value, rounded up to 1n.
  EXPECT_EQ(mustParse("1e999999999999"), mustParse("1n"));
}

TEST(QuantityParse, PrecisionIsNanoRoundedAwayFromZero) {
  EXPECT_EQ(mustParse("0.5n"), mustParse("1n"));
  EXPECT_EQ(mustParse("-0.5n"), mustParse("-1n"));
  EXPECT_EQ(mustParse("1e-10"), mustParse("1n"));
  EXPECT_EQ(mustParse("1.0000000001"), mustParse("1000000001n"));
  EXPECT_EQ(mustParse("0.9999999999"), mustParse("1"));
  EXPECT_EQ(mustParse("1.000000000"), mustParse("1"));
  EXPECT_EQ(mustParse("1e-999999999"), mustParse("1n"));
  EXPECT_EQ(mustParse("1.0000000001Ki"), mustParse("1024000000103n"));
  EXPECT_EQ(mustParse("0.0000000001Ki"), mustParse("103n"));
}

TEST(QuantityParse, BinaryIsCappedDecimalIsNot) {
  const Quantity max = mustParse("9223372036854775807");
  EXPECT_EQ(mustParse("8Ei"), max);
  EXPECT_EQ(mustParse("9Ei"), max);
  EXPECT_EQ(mustParse("8192Pi"), max);
  EXPECT_EQ(mustParse("100000000000000000000000Ki"), max);
  EXPECT_EQ(mustParse("-8Ei"), mustParse("-9223372036854775807"));
  EXPECT_LT(mustParse("8191Pi"), max);
  EXPECT_EQ(mustParse("7.5Ei"), mustParse("8646911284551352320"));
  EXPECT_GT(mustParse("9223372036854775808"), max);
  EXPECT_GT(mustParse("10E"), max);
  EXPECT_LT(mustParse("9E"), max);
  EXPECT_EQ(mustParse("1e100").canonical(), "10e99");
  EXPECT_EQ(mustParse("1000E").canonical(), "1e21");
  EXPECT_EQ(mustParse("18446744073709551616").canonical(), "18446744073709551616");
}

TEST(QuantityParse, TrimmedParsingIsUnmarshalJson) {
  const Quantity one = mustParse("1");
  for (std::string_view s : {" 1", "1 ", " 1 ", "\t1\r\n", "\v\f1",
                             "\xC2\xA0" "1",          // U+00A0
                             "1\xE3\x80\x80",         // U+3000
                             "\xE2\x80\xA8" "1\xC2\x85"}) {  // U+2028, U+0085
    QuantityError err = kFormat;
    const auto q = Quantity::parseTrimmed(s, &err);
    ASSERT_TRUE(q.has_value()) << s;
    EXPECT_EQ(err, kOk);
    EXPECT_EQ(*q, one);
    EXPECT_FALSE(Quantity::parse(s).has_value()) << s;
  }
  for (std::string_view s : {"", "   ", "1\\n", "\\u0031", "true", "{}", "[1]", "1 GPU",
                             "\xE2\x80\x8B" "1",  // U+200B is not White_Space
                             "1\xA0"}) {          // a stray continuation byte
    QuantityError err = kOk;
    EXPECT_FALSE(Quantity::parseTrimmed(s, &err).has_value()) << s;
    EXPECT_EQ(err, kFormat) << s;
  }
  EXPECT_EQ(*Quantity::parseTrimmed(" 0.9999 "), mustParse("0.9999"));
}

// ---------------------------------------------------------------------------

TEST(QuantityCompare, EqualValuesInEveryFormat) {
  EXPECT_EQ(mustParse("1"), mustParse("1000m"));
  EXPECT_EQ(mustParse("1Ki"), mustParse("1024"));
  EXPECT_EQ(mustParse("1e3"), mustParse("1k"));
  EXPECT_EQ(mustParse("1k"), mustParse("1000"));
  EXPECT_EQ(mustParse("1Gi"), mustParse("1073741824000m"));
  EXPECT_EQ(mustParse("1Gi"), mustParse("1.073741824G"));
  EXPECT_EQ(mustParse("0.5Ki"), mustParse("512"));
  EXPECT_EQ(mustParse("1Mi"), mustParse("1024Ki"));
  EXPECT_EQ(mustParse("-0"), mustParse("0"));
  EXPECT_EQ(mustParse("."), Quantity{});
  EXPECT_EQ(mustParse("1e9999999"), mustParse("1000e9999996"));
}

TEST(QuantityCompare, OrderIsExact) {
  EXPECT_LT(mustParse("0.9999"), mustParse("1"));
  EXPECT_LT(mustParse("-1"), mustParse("0"));
  EXPECT_LT(mustParse("-2"), mustParse("-1"));
  EXPECT_LT(mustParse("-1Ki"), mustParse("-1k"));
  EXPECT_LT(mustParse("1k"), mustParse("1Ki"));
  EXPECT_LT(mustParse("1M"), mustParse("1Mi"));
  EXPECT_LT(mustParse("1E"), mustParse("1Ei"));
  EXPECT_LT(mustParse("1Gi"), mustParse("1073741824001m"));
  EXPECT_GT(mustParse("1Gi"), mustParse("1073741823999999999n"));
  EXPECT_LT(mustParse("1n"), mustParse("1u"));
  EXPECT_LT(mustParse("0"), mustParse("1n"));
  EXPECT_LT(mustParse("1.0001"), mustParse("1.001"));
  EXPECT_LT(mustParse("8Ei"), mustParse("1e100"));
  EXPECT_LT(mustParse("-1e100"), mustParse("-8Ei"));
  EXPECT_LT(mustParse("1e9999998"), mustParse("1e9999999"));
  EXPECT_LT(mustParse("-1e9999999"), mustParse("-1e9999998"));
  EXPECT_NE(mustParse("1G"), mustParse("1Gi"));
  EXPECT_EQ(mustParse("2") <=> mustParse("1.9999999999"), std::strong_ordering::equal);
  EXPECT_EQ(mustParse("2") <=> mustParse("1.999999999"), std::strong_ordering::greater);
}

// ---------------------------------------------------------------------------

TEST(QuantityIntegers, IntegerAfterDefaultingIsMilliRoundUp) {
  for (std::string_view s : {"1", "0", "0.9999", "2.9995", "1.9990001", "1E", "8Ei", "1e100",
                             "1e9999999", "4000m", "1.0000", "-1", "-0.9995"}) {
    EXPECT_TRUE(mustParse(s).isIntegerAfterDefaulting()) << s;
  }
  for (std::string_view s : {"1.0001", "1u", "1n", "500m", "1.999", "1.9989999", "1.001",
                             "1e-3", "1.5e0", "-1.5"}) {
    EXPECT_FALSE(mustParse(s).isIntegerAfterDefaulting()) << s;
  }
}

TEST(QuantityIntegers, WholeNumbersAndInt64) {
  EXPECT_TRUE(mustParse("1E").isWholeNumber());
  EXPECT_FALSE(mustParse("0.9999").isWholeNumber());
  EXPECT_EQ(mustParse("1Gi").asInt64(), 1073741824);
  EXPECT_EQ(mustParse("8Ei").asInt64(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(mustParse("-9223372036854775808").asInt64(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(mustParse("-9223372036854775809").asInt64(), std::nullopt);
  EXPECT_EQ(mustParse("9223372036854775808").asInt64(), std::nullopt);
  EXPECT_EQ(mustParse("1e19").asInt64(), std::nullopt);
  EXPECT_EQ(mustParse("1.5").asInt64(), std::nullopt);
  EXPECT_EQ(mustParse("2000m").asInt64(), 2);
  EXPECT_EQ(mustParse("0").asInt64(), 0);
}

TEST(QuantityIntegers, CeilToInt64RoundsAwayFromZeroAndSaturates) {
  EXPECT_EQ(mustParse("0.9999").ceilToInt64(), 1);
  EXPECT_EQ(mustParse("1.0001").ceilToInt64(), 2);
  EXPECT_EQ(mustParse("1n").ceilToInt64(), 1);
  EXPECT_EQ(mustParse("3").ceilToInt64(), 3);
  EXPECT_EQ(mustParse("0").ceilToInt64(), 0);
  EXPECT_EQ(mustParse("-1.5").ceilToInt64(), -2);
  EXPECT_EQ(mustParse("1e19").ceilToInt64(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(mustParse("1e9999999").ceilToInt64(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(mustParse("-1e30").ceilToInt64(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(mustParse("9223372036854775806.5").ceilToInt64(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(mustParse("9223372036854775807.5").ceilToInt64(), std::numeric_limits<std::int64_t>::max());
}

TEST(QuantityCanonical, KeepsFormatAndUsesLargestExponent) {
  EXPECT_EQ(mustParse("1500000").canonical(), "1500k");
  EXPECT_EQ(mustParse("1.5e6").canonical(), "1500e3");
  EXPECT_EQ(mustParse("15e5").canonical(), "1500e3");
  EXPECT_EQ(mustParse("0.1").canonical(), "100m");
  EXPECT_EQ(mustParse("0.01e0").canonical(), "10e-3");
  EXPECT_EQ(mustParse("12e-10").canonical(), "2e-9");  // 1.2n rounds up to 2n
  EXPECT_EQ(mustParse("-1.5Gi").canonical(), "-1536Mi");
  EXPECT_EQ(mustParse("-1024").canonical(), "-1024");
  EXPECT_EQ(mustParse("-1000").canonical(), "-1k");
  EXPECT_EQ(mustParse("-1Ki").canonical(), "-1Ki");
  EXPECT_EQ(mustParse("1536Ki").canonical(), "1536Ki");
  EXPECT_EQ(mustParse("2048Ki").canonical(), "2Mi");
  EXPECT_EQ(mustParse("1.0005Ki").canonical(), "1024512m");  // not whole: DecimalSI
  EXPECT_EQ(mustParse("7Ei").canonical(), "7Ei");
  EXPECT_EQ(mustParse("1000P").canonical(), "1E");
  EXPECT_EQ(mustParse("1e9999999").canonical(), "1e9999999");
  EXPECT_EQ(Quantity{}.canonical(), "0");
  EXPECT_EQ(mustParse("0Ki").canonical(), "0");
  EXPECT_EQ(mustParse("0e5").canonical(), "0");
}

TEST(QuantityCanonical, FormatIsReported) {
  EXPECT_EQ(mustParse("1").format(), Quantity::Format::DecimalSI);
  EXPECT_EQ(mustParse("1Ki").format(), Quantity::Format::BinarySI);
  EXPECT_EQ(mustParse("1e3").format(), Quantity::Format::DecimalExponent);
  EXPECT_EQ(mustParse("0.0001Ki").format(), Quantity::Format::DecimalSI);  // 0 < |v| < 1
  EXPECT_EQ(mustParse("1.5Ki").defaulted().format(), Quantity::Format::BinarySI);
}

// ---------------------------------------------------------------------------
// Robustness: nothing may crash, hang or allocate in proportion to an
// exponent.

TEST(QuantityRobustness, HugeInputsAndExponents) {
  const std::string digits(1 << 20, '9');
  const Quantity big = mustParse(digits);
  EXPECT_TRUE(big.isWholeNumber());
  EXPECT_EQ(big.asInt64(), std::nullopt);
  EXPECT_EQ(big.canonical().size(), digits.size());
  EXPECT_LT(big, mustParse("1e1048576"));
  EXPECT_EQ(mustParse(digits + "n").canonical(), digits + "n");

  const Quantity frac = mustParse("0." + digits);  // rounds up to exactly 1
  EXPECT_EQ(frac, mustParse("1"));
  EXPECT_EQ(mustParse("0." + digits + "Ki"), mustParse("1Ki"));
  EXPECT_EQ(mustParse(digits + "Ei"), mustParse("8Ei"));
  EXPECT_EQ(mustParse(std::string(1 << 20, '0') + "1"), mustParse("1"));
  EXPECT_EQ(mustParse("1e" + std::string(1 << 20, '0') + "3"), mustParse("1k"));

  QuantityError err = kOk;
  EXPECT_FALSE(Quantity::parse("1e" + digits, &err).has_value());
  EXPECT_EQ(err, kSuffix);
  EXPECT_FALSE(Quantity::parse(digits + "x", &err).has_value());
  EXPECT_EQ(err, kFormat);

  // Exponents at the int32 edges (Go's int32 arithmetic, see quantity.h).
  for (std::string_view s : {"1e2147483647", "1e-2147483647", "1e2147483648", "1e-2147483648",
                             ".5e-2147483648", "1.5e-2147483647", "9.9e2147483647",
                             "1e999999999", "1e-999999999"}) {
    SCOPED_TRACE(s);
    const Quantity q = mustParse(s);
    EXPECT_EQ(mustParse(q.canonical()), q);
    (void)q.isIntegerAfterDefaulting();
    (void)q.ceilToInt64();
    (void)q.defaulted();
  }
  EXPECT_GT(mustParse("1e2147483647"), mustParse("1e9999999"));
  EXPECT_TRUE(mustParse("1e2147483647").isIntegerAfterDefaulting());
  EXPECT_EQ(mustParse("1e-2147483647"), mustParse("1n"));
}

// The scanner is checked against the (relaxed) grammar it implements: a
// string is FormatWrong exactly when it does not match this pattern.
TEST(QuantityRobustness, RandomStringsNeverCrashAndFollowTheScanner) {
  const std::regex scanner(R"(^[+-]?0*[0-9]*(\.[0-9]*)?[eEinumkKMGTP]*[-+]?[0-9]*$)");
  const std::string alphabet = "0123456789..+-eEinumkKMGTP xi\xC2\xB5";
  std::mt19937_64 rng(20240611);
  for (int n = 0; n < 20000; ++n) {
    std::string s(rng() % 10, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    QuantityError err = kOk;
    const auto q = Quantity::parse(s, &err);
    SCOPED_TRACE(s);
    EXPECT_EQ(err == kFormat, s.empty() || !std::regex_match(s, scanner));
    EXPECT_EQ(q.has_value(), err == kOk);
    if (q) {
      EXPECT_EQ(mustParse(q->canonical()), *q);
      // RoundUp moves away from zero.
      if (q->isNegative()) {
        EXPECT_LE(q->defaulted(), *q);
      } else {
        EXPECT_GE(q->defaulted(), *q);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Property test: random well-formed quantities against the reference.

std::string randomQuantity(std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  // Zeros and nines make carries and exact-boundary cases common.
  static constexpr std::string_view kDigits = "0000999912345678";
  auto digits = [&](std::size_t maxLen) {
    std::string d(pick(maxLen + 1), '0');
    for (char& c : d) c = kDigits[pick(kDigits.size())];
    return d;
  };
  std::string s;
  switch (pick(4)) {
    case 0: s += "+"; break;
    case 1: s += "-"; break;
    default: break;
  }
  s += std::string(pick(3), '0');
  const bool small = pick(2) == 0;
  std::string whole = digits(small ? 3 : 22);
  std::string frac;
  const bool dot = pick(2) == 0;
  if (dot) frac = digits(small ? 4 : 22);
  if (whole.empty() && frac.empty()) whole = std::string(1, kDigits[pick(kDigits.size())]);
  s += whole;
  if (dot) s += "." + frac;
  static constexpr std::string_view kSuffixes[] = {"", "n", "u", "m", "k", "M", "G", "T", "P", "E",
                                                   "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  switch (pick(10)) {
    case 0: case 1: case 2: case 3:
      s += kSuffixes[pick(10)];
      break;
    case 4: case 5:
      s += kSuffixes[10 + pick(6)];
      break;
    case 6: case 7: case 8: {
      s += pick(2) == 0 ? "e" : "E";
      const long long e = static_cast<long long>(pick(46)) - 21;
      if (e >= 0 && pick(3) == 0) s += "+";
      if (e < 0) s += "-";
      s += std::string(pick(2), '0') + std::to_string(e < 0 ? -e : e);
      break;
    }
    default:
      break;
  }
  return s;
}

std::optional<std::int64_t> refInt64(const RefValue& v) {
  // Only called for whole values.
  const std::string units = v.nano == "0" ? "0" : v.nano.substr(0, v.nano.size() - 9);
  const std::string limit = v.negative ? "9223372036854775808" : "9223372036854775807";
  if (cmpNat(units, limit) > 0) return std::nullopt;
  if (v.negative) {
    return units == "9223372036854775808" ? std::numeric_limits<std::int64_t>::min()
                                          : -std::stoll(units);
  }
  return std::stoll(units);
}

TEST(QuantityProperty, RandomQuantitiesAgreeWithReference) {
  std::mt19937_64 rng(0x9b0a5d);
  const std::vector<std::string> anchors = {"0", "1", "-1", "1000m", "0.9999", "1Ki", "8Ei", "1n",
                                            "-1n", "1e100"};
  std::vector<std::pair<Quantity, RefValue>> seen;
  for (const auto& a : anchors) seen.emplace_back(mustParse(a), refValue(a));

  constexpr int kCount = 4000;
  for (int n = 0; n < kCount; ++n) {
    const std::string text = randomQuantity(rng);
    SCOPED_TRACE(text);
    QuantityError err = kFormat;
    const auto parsed = Quantity::parse(text, &err);
    ASSERT_TRUE(parsed.has_value());
    ASSERT_EQ(err, kOk);
    const Quantity& q = *parsed;
    const RefValue ref = refValue(text);

    // Exact value: canonical() renders it exactly, and re-parses equal and
    // stable.
    const std::string canon = q.canonical();
    EXPECT_EQ(refValue(canon), ref) << canon;
    const Quantity again = mustParse(canon);
    EXPECT_EQ(again, q);
    EXPECT_EQ(again.canonical(), canon);
    // Canonical shape: no sign but '-', no leading zeros, mantissa with the
    // largest exponent (never ends in 000), no fraction.
    static const std::regex shape(R"(^(0|-?[1-9][0-9]*(|[numkMGTPE]|[KMGTPE]i|e-?[1-9][0-9]*))$)");
    EXPECT_TRUE(std::regex_match(canon, shape)) << canon;
    const std::size_t mantissaEnd = canon.find_first_not_of("-0123456789");
    const std::string mantissa = canon.substr(0, mantissaEnd);
    if (q.format() != Quantity::Format::BinarySI) {
      EXPECT_FALSE(mantissa.size() >= 3 && mantissa.compare(mantissa.size() - 3, 3, "000") == 0)
          << canon;
    }

    // The same value spelled in nano units is equal.
    EXPECT_EQ(mustParse((ref.negative ? "-" : "") + ref.nano + "n"), q);
    EXPECT_EQ(mustParse((ref.negative ? "-" : "") + ref.nano + "e-9"), q);

    EXPECT_EQ(q.isZero(), ref.nano == "0");
    EXPECT_EQ(q.isNegative(), ref.negative);
    EXPECT_EQ(q.isWholeNumber(), refWhole(ref));
    EXPECT_EQ(q.isIntegerAfterDefaulting(), refIntegerAfterDefaulting(ref));

    RefValue milli = ref;
    milli.nano = timesPow10(ceilDivPow10(ref.nano, 6), 6);
    EXPECT_EQ(valueOf(q.defaulted()), milli);
    EXPECT_EQ(q.defaulted().format(), q.format());

    if (refWhole(ref)) {
      EXPECT_EQ(q.asInt64(), refInt64(ref));
    } else {
      EXPECT_EQ(q.asInt64(), std::nullopt);
    }
    RefValue ceil = ref;
    ceil.nano = timesPow10(ceilDivPow10(ref.nano, 9), 9);
    const auto ceilRef = refInt64(ceil);
    const std::int64_t saturated = ceil.negative ? std::numeric_limits<std::int64_t>::min()
                                                 : std::numeric_limits<std::int64_t>::max();
    EXPECT_EQ(q.ceilToInt64(), ceilRef.value_or(saturated));

    // Ordering against the anchors and a few earlier quantities.
    auto check = [&](const std::pair<Quantity, RefValue>& other) {
      const int want = cmpRef(ref, other.second);
      const auto got = q <=> other.first;
      EXPECT_EQ(got, want < 0   ? std::strong_ordering::less
                     : want > 0 ? std::strong_ordering::greater
                                : std::strong_ordering::equal)
          << other.first.canonical();
      EXPECT_EQ(q == other.first, want == 0);
    };
    for (std::size_t k = 0; k < anchors.size(); ++k) check(seen[k]);
    for (std::size_t k = 0; k < 3 && k < seen.size(); ++k) check(seen[seen.size() - 1 - k]);
    if (seen.size() > anchors.size()) {
      check(seen[anchors.size() + rng() % (seen.size() - anchors.size())]);
    }
    seen.emplace_back(q, ref);
  }
}

}  // namespace
