#include "rules/k8s/quantity.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <ostream>

namespace gpuguard {

namespace {

using Format = Quantity::Format;

constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";
constexpr std::string_view kErrNumeric = "unable to parse numeric part of quantity";

// 2^63-1, the BinarySI cap (maxAllowed in amount.go).
constexpr std::string_view kMaxInt64Digits = "9223372036854775807";

constexpr bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The character set of the greedy suffix loop in parseQuantityString.
constexpr bool isSuffixChar(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

// Go's int32(x) for an int64 x: keep the low 32 bits (two's complement).
constexpr std::int32_t wrap32(std::int64_t v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}

// The pieces parseQuantityString returns.
struct Scanned {
  bool positive = true;
  std::string_view num;    // integer digits, leading zeros stripped; "" means "0"
  std::string_view denom;  // fractional digits (may be empty)
  std::string_view suffix;
  bool hasDigits = false;  // whether Go's `value` substring holds any digit
};

// parseQuantityString, step for step. Returns None or FormatWrong.
QuantityError scan(std::string_view s, Scanned& out) {
  const std::size_t end = s.size();
  std::size_t pos = 0;
  if (pos < end) {
    if (s[0] == '-') {
      out.positive = false;
      ++pos;
    } else if (s[0] == '+') {
      ++pos;
    }
  }
  // Strip leading zeros; input ending here is zero (Go sets value = "0").
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) {
    out.hasDigits = true;
    return QuantityError::None;
  }
  out.hasDigits = pos > 0 && s[pos - 1] == '0';
  // Numerator.
  std::size_t i = pos;
  while (i < end && isDigit(s[i])) ++i;
  out.num = s.substr(pos, i - pos);
  if (!out.num.empty()) out.hasDigits = true;
  pos = i;
  if (pos >= end) return QuantityError::None;
  // Denominator.
  if (s[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && isDigit(s[i])) ++i;
    out.denom = s.substr(pos, i - pos);
    if (!out.denom.empty()) out.hasDigits = true;
    pos = i;
    if (pos >= end) return QuantityError::None;
  }
  // Suffix: greedy letters, optional sign, digits, then the end.
  const std::size_t suffixStart = pos;
  while (pos < end && isSuffixChar(s[pos])) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos < end) return QuantityError::FormatWrong;
  out.suffix = s.substr(suffixStart);
  return QuantityError::None;
}

struct Interpreted {
  int base = 10;
  std::int32_t exponent = 0;
  Format format = Format::DecimalSI;
};

// strconv.ParseInt(s, 10, 64).
bool parseInt64(std::string_view s, std::int64_t& out) {
  bool negative = false;
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
  }
  if (i >= s.size()) return false;
  const std::uint64_t limit =
      negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!isDigit(s[i])) return false;
    const auto d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  out = negative ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return true;
}

// suffixHandler.interpret: decimal table, binary table, then e/E<int>.
bool interpret(std::string_view suf, Interpreted& out) {
  if (suf.empty()) {
    out = {10, 0, Format::DecimalSI};
    return true;
  }
  if (suf.size() == 1) {
    std::int32_t exp = 0;
    switch (suf[0]) {
      case 'n': exp = -9; break;
      case 'u': exp = -6; break;
      case 'm': exp = -3; break;
      case 'k': exp = 3; break;
      case 'M': exp = 6; break;
      case 'G': exp = 9; break;
      case 'T': exp = 12; break;
      case 'P': exp = 15; break;
      case 'E': exp = 18; break;
      default: return false;  // "e" alone, "K", "i"
    }
    out = {10, exp, Format::DecimalSI};
    return true;
  }
  if (suf.size() == 2 && suf[1] == 'i') {
    std::int32_t exp = 0;
    switch (suf[0]) {
      case 'K': exp = 10; break;
      case 'M': exp = 20; break;
      case 'G': exp = 30; break;
      case 'T': exp = 40; break;
      case 'P': exp = 50; break;
      case 'E': exp = 60; break;
      default: exp = 0; break;  // "ei", "ki", "mi": maybe e-notation (fails)
    }
    if (exp != 0) {
      out = {2, exp, Format::BinarySI};
      return true;
    }
  }
  if (suf[0] == 'e' || suf[0] == 'E') {
    std::int64_t parsed = 0;
    if (!parseInt64(suf.substr(1), parsed)) return false;
    out = {10, wrap32(parsed), Format::DecimalExponent};
    return true;
  }
  return false;
}

// ---- digit-string helpers (magnitudes; no leading zeros unless noted) ----

// Strips leading zeros; strips trailing zeros into exp. Empty means zero.
void normalize(std::string& digits, std::int64_t& exp) {
  std::size_t lead = 0;
  while (lead < digits.size() && digits[lead] == '0') ++lead;
  if (lead == digits.size()) {
    digits.clear();
    exp = 0;
    return;
  }
  std::size_t last = digits.size();
  while (digits[last - 1] == '0') --last;
  exp += static_cast<std::int64_t>(digits.size() - last);
  digits.erase(last);
  digits.erase(0, lead);
}

// Adds one unit in the last place (digits non-empty, normalized or not).
void incrementLast(std::string& digits) {
  std::size_t i = digits.size();
  while (i > 0) {
    --i;
    if (digits[i] != '9') {
      ++digits[i];
      return;
    }
    digits[i] = '0';
  }
  digits.insert(digits.begin(), '1');
}

// Rounds a normalized non-zero magnitude away from zero to a multiple of
// 10^scale (inf.RoundUp); keeps it normalized.
void roundAwayToScale(std::string& digits, std::int64_t& exp, std::int64_t scale) {
  if (digits.empty() || exp >= scale) return;
  // Trailing zeros are stripped, so the dropped part is always non-zero.
  const std::int64_t drop = scale - exp;
  if (drop >= static_cast<std::int64_t>(digits.size())) {
    digits.assign(1, '1');
  } else {
    digits.resize(digits.size() - static_cast<std::size_t>(drop));
    incrementLast(digits);
  }
  exp = scale;
  normalize(digits, exp);
}

// digits *= 2^power for a magnitude with possible leading zeros.
void multiplyPow2(std::string& digits, int power) {
  while (power > 0) {
    const int step = std::min(power, 20);
    power -= step;
    std::uint64_t carry = 0;
    for (std::size_t i = digits.size(); i > 0; --i) {
      const std::uint64_t v =
          (static_cast<std::uint64_t>(digits[i - 1] - '0') << step) + carry;
      digits[i - 1] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    std::string prefix;
    while (carry > 0) {
      prefix.push_back(static_cast<char>('0' + carry % 10));
      carry /= 10;
    }
    std::reverse(prefix.begin(), prefix.end());
    digits.insert(0, prefix);
  }
}

// Compares normalized magnitudes (digits * 10^exp); empty digits is zero.
int compareMagnitude(const std::string& ad, std::int64_t ae, const std::string& bd,
                     std::int64_t be) {
  if (ad.empty() || bd.empty()) return ad.empty() ? (bd.empty() ? 0 : -1) : 1;
  // Position just above the most significant digit decides first.
  const std::int64_t at = static_cast<std::int64_t>(ad.size()) + ae;
  const std::int64_t bt = static_cast<std::int64_t>(bd.size()) + be;
  if (at != bt) return at < bt ? -1 : 1;
  // Same magnitude: the digit strings, read from the top, decide; with no
  // trailing zeros a proper prefix is the smaller value.
  const int c = ad.compare(bd);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Digit of a normalized magnitude at 10^power (0 outside the digits).
int digitAt(const std::string& digits, std::int64_t exp, std::int64_t power) {
  const std::int64_t fromRight = power - exp;
  if (fromRight < 0 || fromRight >= static_cast<std::int64_t>(digits.size())) return 0;
  return digits[digits.size() - 1 - static_cast<std::size_t>(fromRight)] - '0';
}

// Magnitude of a whole normalized value as uint64, or nullopt if >= 2^64.
std::optional<std::uint64_t> wholeMagnitude(const std::string& digits, std::int64_t exp) {
  if (digits.empty()) return 0;
  if (static_cast<std::int64_t>(digits.size()) + exp > 20) return std::nullopt;
  std::uint64_t v = 0;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  auto push = [&](unsigned d) {
    if (v > (max - d) / 10) return false;
    v = v * 10 + d;
    return true;
  };
  for (char c : digits) {
    if (!push(static_cast<unsigned>(c - '0'))) return std::nullopt;
  }
  for (std::int64_t i = 0; i < exp; ++i) {
    if (!push(0)) return std::nullopt;
  }
  return v;
}

std::int64_t saturate(bool negative, std::optional<std::uint64_t> mag) {
  constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!negative) {
    return (!mag || *mag > kMax) ? std::numeric_limits<std::int64_t>::max()
                                 : static_cast<std::int64_t>(*mag);
  }
  if (!mag || *mag > kMax + 1) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(0 - *mag);
}

bool fail(QuantityError* error, QuantityError kind) {
  if (error != nullptr) *error = kind;
  return false;
}

}  // namespace

std::string_view quantityErrorMessage(QuantityError e) {
  switch (e) {
    case QuantityError::None:
      return {};
    case QuantityError::FormatWrong:
      return kErrFormatWrong;
    case QuantityError::Suffix:
      return kErrSuffix;
    case QuantityError::Numeric:
      return kErrNumeric;
  }
  return {};
}

namespace {

// A decimal suffix (SI, "m", "e3" ...): digits x 10^exp10 as Go's
// ParseQuantity computes it. Go: precision = 18 - len(num+denom); scale =
// exponent - len(denom) in int32. The int64 fast path is taken when
// precision >= 0 and scale >= Nano; otherwise inf.Dec parses `value`
// (ErrNumeric when it has no digit, e.g. ".e-10") with scale len(denom) -
// exponent, in int32.
QuantityError decimalValue(const Scanned& sc, const Interpreted& in, std::string& digits, std::int64_t& exp10) {
  const auto denomLen = static_cast<std::int64_t>(sc.denom.size());
  const std::int64_t totalDigits = static_cast<std::int64_t>(digits.size());
  const std::int32_t scale = wrap32(std::int64_t{in.exponent} - denomLen);
  if (totalDigits <= 18 && scale >= -9) {
    exp10 = scale;
  } else {
    if (!sc.hasDigits) return QuantityError::Numeric;
    const std::int32_t infScale = wrap32(denomLen + std::int64_t{wrap32(-std::int64_t{in.exponent})});
    exp10 = -std::int64_t{infScale};
  }
  normalize(digits, exp10);
  roundAwayToScale(digits, exp10, -9);
  return QuantityError::None;
}

// (num.denom) x 2^exponent, rounded away from zero to nano, capped at
// 2^63-1 in magnitude. Go takes its int64 fast path only without a fraction
// and when precision = 15 - len(num) - exponent*3/10 - 1 >= 0 (and the
// product fits); otherwise inf.Dec parses `value`, which needs a digit: "Pi"
// and "Ei" alone are ErrNumeric while "Ki" .. "Ti" alone are zero.
QuantityError binaryValue(const Scanned& sc, const Interpreted& in, std::string& digits, std::int64_t& exp10) {
  const auto denomLen = static_cast<std::int64_t>(sc.denom.size());
  const std::int64_t numLen = static_cast<std::int64_t>(sc.num.empty() ? 1 : sc.num.size());
  const std::int64_t precision = 15 - numLen - in.exponent * 3 / 10 - 1;
  if ((denomLen != 0 || precision < 0) && !sc.hasDigits) return QuantityError::Numeric;
  std::int64_t exp = -denomLen;
  normalize(digits, exp);
  bool capped = false;
  if (!digits.empty() && exp >= 0 && digits.size() + static_cast<std::size_t>(exp) <= 18) {
    // Whole and below 10^18: exact in uint64 (like Go's int64 fast path).
    std::uint64_t v = 0;
    for (char c : digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    for (std::int64_t i = 0; i < exp; ++i) v *= 10;
    constexpr std::uint64_t kCap = (std::uint64_t{1} << 63) - 1;
    if (v > (kCap >> in.exponent)) {
      capped = true;
    } else {
      digits = std::to_string(v << in.exponent);
      exp = 0;
      normalize(digits, exp);
    }
  } else if (!digits.empty()) {
    // At least 10^19 before the (>= 2^10) factor: certainly above the cap.
    if (static_cast<std::int64_t>(digits.size()) + exp > 19) {
      capped = true;
    } else {
      multiplyPow2(digits, in.exponent);
      normalize(digits, exp);
      roundAwayToScale(digits, exp, -9);
      capped = compareMagnitude(digits, exp, std::string(kMaxInt64Digits), 0) > 0;
    }
  }
  if (capped) {
    digits.assign(kMaxInt64Digits);
    exp = 0;
  }
  exp10 = exp;
  return QuantityError::None;
}

}  // namespace

std::optional<Quantity> Quantity::parse(std::string_view text, QuantityError* error) {
  if (text.empty()) {
    fail(error, QuantityError::FormatWrong);
    return std::nullopt;
  }
  Quantity q;
  // Fast path: a short plain non-negative integer ("1", "8", "16").
  if (text.size() <= 18 && std::all_of(text.begin(), text.end(), isDigit)) {
    q.digits_.assign(text);
    normalize(q.digits_, q.exp10_);
    if (error != nullptr) *error = QuantityError::None;
    return q;
  }

  Scanned sc;
  if (QuantityError e = scan(text, sc); e != QuantityError::None) {
    fail(error, e);
    return std::nullopt;
  }
  Interpreted in;
  if (!interpret(sc.suffix, in)) {
    fail(error, QuantityError::Suffix);
    return std::nullopt;
  }
  const std::string_view num = sc.num.empty() ? std::string_view("0") : sc.num;
  q.digits_.reserve(num.size() + sc.denom.size());
  q.digits_.append(num);
  q.digits_.append(sc.denom);
  q.format_ = in.format;
  const QuantityError e = in.base == 10 ? decimalValue(sc, in, q.digits_, q.exp10_) : binaryValue(sc, in, q.digits_, q.exp10_);
  if (e != QuantityError::None) {
    fail(error, e);
    return std::nullopt;
  }
  // A BinarySI value strictly between 0 and 1 in magnitude becomes DecimalSI.
  if (in.base != 10 && !q.digits_.empty() && static_cast<std::int64_t>(q.digits_.size()) + q.exp10_ <= 0) {
    q.format_ = Format::DecimalSI;
  }
  q.negative_ = !sc.positive && !q.digits_.empty();
  if (error != nullptr) *error = QuantityError::None;
  return q;
}

std::optional<Quantity> Quantity::parseTrimmed(std::string_view text, QuantityError* error) {
  // strings.TrimSpace: Unicode White_Space, decoded as UTF-8.
  auto spaceLenAt = [&](std::size_t i) -> std::size_t {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 == ' ' || (b0 >= '\t' && b0 <= '\r')) return 1;
    const std::size_t left = text.size() - i;
    if (b0 == 0xC2 && left >= 2) {
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      return (b1 == 0x85 || b1 == 0xA0) ? 2 : 0;  // U+0085, U+00A0
    }
    if ((b0 == 0xE1 || b0 == 0xE2 || b0 == 0xE3) && left >= 3) {
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      const auto b2 = static_cast<unsigned char>(text[i + 2]);
      if ((b2 & 0xC0) != 0x80) return 0;
      const unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
      if ((b1 & 0xC0) != 0x80) return 0;
      const bool space = cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
                         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
      return space ? 3 : 0;
    }
    return 0;
  };
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t n = spaceLenAt(begin);
    if (n == 0) break;
    begin += n;
  }
  std::size_t end = text.size();
  while (end > begin) {
    // Find the start of the last UTF-8 sequence (at most 3 bytes back for
    // the code points that count as space).
    std::size_t start = end - 1;
    while (start > begin && end - start < 3 &&
           (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
      --start;
    }
    const std::size_t n = spaceLenAt(start);
    if (n == 0 || start + n != end) break;
    end = start;
  }
  return parse(text.substr(begin, end - begin), error);
}

bool Quantity::isNegative() const { return negative_; }

bool Quantity::isZero() const { return digits_.empty(); }

bool Quantity::isWholeNumber() const { return digits_.empty() || exp10_ >= 0; }

bool Quantity::isIntegerAfterDefaulting() const {
  if (isWholeNumber()) return true;
  // A fraction at milli or coarser cannot vanish by rounding at milli.
  if (exp10_ >= -3) return false;
  // Otherwise the value is truncated to milli and one milli is added (the
  // dropped part is non-zero): whole exactly when the tenths, hundredths and
  // thousandths digits are all 9.
  return digitAt(digits_, exp10_, -1) == 9 && digitAt(digits_, exp10_, -2) == 9 &&
         digitAt(digits_, exp10_, -3) == 9;
}

std::optional<std::int64_t> Quantity::asInt64() const {
  if (!isWholeNumber()) return std::nullopt;
  const auto mag = wholeMagnitude(digits_, exp10_);
  if (!mag) return std::nullopt;
  constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (*mag > (negative_ ? kMax + 1 : kMax)) return std::nullopt;
  return negative_ ? static_cast<std::int64_t>(0 - *mag) : static_cast<std::int64_t>(*mag);
}

std::int64_t Quantity::ceilToInt64() const {
  if (isWholeNumber()) return saturate(negative_, wholeMagnitude(digits_, exp10_));
  // Rounding away from zero to milli and then to a whole number is the same
  // as rounding away from zero to a whole number.
  std::string d = digits_;
  std::int64_t e = exp10_;
  roundAwayToScale(d, e, 0);
  return saturate(negative_, wholeMagnitude(d, e));
}

Quantity Quantity::defaulted() const {
  Quantity q = *this;
  roundAwayToScale(q.digits_, q.exp10_, -3);
  return q;
}

std::string Quantity::canonical() const {
  if (digits_.empty()) return "0";
  std::string out;
  if (negative_) out.push_back('-');

  if (format_ == Format::BinarySI) {
    // |v| >= 1024 and whole: largest power-of-1024 suffix. Parsed BinarySI
    // values are capped at 2^63-1, so the magnitude fits in uint64.
    const std::int64_t top = static_cast<std::int64_t>(digits_.size()) + exp10_;
    if (exp10_ >= 0 && top >= 4) {
      if (auto mag = wholeMagnitude(digits_, exp10_); mag && *mag >= 1024) {
        std::uint64_t m = *mag;
        int times = 0;
        while (m >= 1024 && m % 1024 == 0) {
          m /= 1024;
          ++times;
        }
        static constexpr std::string_view kBin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        out += std::to_string(m);
        if (times < 7) {
          out += kBin[times];
          return out;
        }
        // Unreachable for parsed values (2^70 > cap); fall back to decimal.
        out.resize(negative_ ? 1 : 0);
      }
    }
    // Otherwise emitted as DecimalSI.
  }

  // Largest multiple-of-3 exponent that leaves an integer mantissa.
  std::int64_t rem = exp10_ % 3;
  if (rem < 0) rem += 3;
  std::int64_t exponent = exp10_ - rem;
  out += digits_;
  out.append(static_cast<std::size_t>(rem), '0');
  // parse() truncates exponents to 32 bits like Go; an exponent above the
  // largest int32 multiple of 3 moves its excess into the mantissa as zeros,
  // so the text re-parses to the same value.
  constexpr std::int64_t kMaxExponent = 2147483646;
  if (exponent > kMaxExponent) {
    out.append(static_cast<std::size_t>(exponent - kMaxExponent), '0');
    exponent = kMaxExponent;
  }

  const bool decimalSI = format_ != Format::DecimalExponent;
  if (decimalSI && exponent >= -9 && exponent <= 18) {
    static constexpr std::string_view kDec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    out += kDec[(exponent + 9) / 3];
  } else if (exponent != 0) {
    out.push_back('e');
    out += std::to_string(exponent);
  }
  return out;
}

std::strong_ordering Quantity::operator<=>(const Quantity& other) const {
  const int sa = digits_.empty() ? 0 : (negative_ ? -1 : 1);
  const int sb = other.digits_.empty() ? 0 : (other.negative_ ? -1 : 1);
  if (sa != sb) return sa <=> sb;
  if (sa == 0) return std::strong_ordering::equal;
  int c = compareMagnitude(digits_, exp10_, other.digits_, other.exp10_);
  if (sa < 0) c = -c;
  return c <=> 0;
}

std::ostream& operator<<(std::ostream& os, QuantityError e) {
  switch (e) {
    case QuantityError::None: return os << "None";
    case QuantityError::FormatWrong: return os << "FormatWrong";
    case QuantityError::Suffix: return os << "Suffix";
    case QuantityError::Numeric: return os << "Numeric";
  }
  return os << "QuantityError(" << static_cast<int>(e) << ")";
}

std::ostream& operator<<(std::ostream& os, const Quantity& q) { return os << q.canonical(); }

}  // namespace gpuguard
