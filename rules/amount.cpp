#include "rules/amount.h"

#include <algorithm>
#include <limits>

#include "rules/k8s/quantity.h"

namespace gpuguard {
namespace {

constexpr Int128 kNano = 1'000'000'000;
// 10^36 nano = 10^27 units: the saturation bound, far below 2^127 (~1.7e38)
// so that adding two saturated values cannot overflow.
const Int128 kMax = [] {
  Int128 v = 1;
  for (int i = 0; i < 36; ++i) v *= 10;
  return v;
}();

Int128 clamp(Int128 v) { return std::clamp(v, -kMax, kMax); }

std::string toDecimal(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  if (negative) v = -v;
  std::string out;
  while (v > 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  if (negative) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

// digits * 10^exp10 in nano units, saturated.
Int128 scaled(std::string_view digits, long long exp10) {
  Int128 v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > kMax) return kMax;
  }
  if (v == 0) return 0;
  long long e = exp10 + 9;  // to nano
  for (; e > 0; --e) {
    v *= 10;
    if (v > kMax) return kMax;
  }
  for (; e < 0; ++e) v /= 10;  // cannot happen for parsed values (exact to nano)
  return v;
}

}  // namespace

Amount Amount::units(long long n) {
  Amount a;
  a.nano_ = clamp(static_cast<Int128>(n) * kNano);
  return a;
}

// Reads Quantity::canonical(): [-]digits followed by nothing, a decimal or
// binary SI suffix, or e<exponent>. The mantissa is always an integer there.
Amount Amount::fromQuantity(const Quantity& q) {
  const std::string text = q.canonical();
  std::string_view s = text;
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  const std::string_view digits = s.substr(0, n);
  const std::string_view suffix = s.substr(n);
  Int128 v = 0;
  if (suffix.empty()) {
    v = scaled(digits, 0);
  } else if (suffix.front() == 'e' || suffix.front() == 'E') {
    std::string_view e = suffix.substr(1);
    const bool negExp = !e.empty() && e.front() == '-';
    if (!e.empty() && (e.front() == '-' || e.front() == '+')) e.remove_prefix(1);
    long long exp = 0;
    for (char c : e) exp = std::min<long long>(exp * 10 + (c - '0'), 1'000'000);
    v = scaled(digits, negExp ? -exp : exp);
  } else {
    static constexpr std::pair<std::string_view, int> kDecimal[] = {
        {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
    static constexpr std::pair<std::string_view, int> kBinary[] = {
        {"Ki", 1}, {"Mi", 2}, {"Gi", 3}, {"Ti", 4}, {"Pi", 5}, {"Ei", 6}};
    bool found = false;
    for (const auto& [name, exp] : kDecimal) {
      if (suffix == name) {
        v = scaled(digits, exp);
        found = true;
      }
    }
    for (const auto& [name, power] : kBinary) {
      if (suffix != name) continue;
      v = scaled(digits, 0);
      for (int i = 0; i < power && v < kMax; ++i) v = clamp(v * 1024);
      found = true;
    }
    if (!found) v = 0;  // canonical() never emits anything else
  }
  Amount a;
  a.nano_ = negative ? -v : v;
  return a;
}

std::optional<Amount> Amount::fromJson(const nlohmann::json& value) {
  const QuantityValue q = decodeQuantity(value);
  if (!q.quantity) return std::nullopt;
  return fromQuantity(*q.quantity);
}

Amount Amount::operator+(const Amount& o) const {
  Amount a;
  a.nano_ = clamp(nano_ + o.nano_);
  return a;
}

Amount Amount::operator-(const Amount& o) const {
  Amount a;
  a.nano_ = clamp(nano_ - o.nano_);
  return a;
}

std::string Amount::str(bool binary) const {
  if (nano_ % kNano == 0) {
    Int128 whole = nano_ / kNano;
    if (binary && whole != 0) {
      static constexpr std::string_view kBin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int times = 0;
      while (times < 6 && whole % 1024 == 0) {
        whole /= 1024;
        ++times;
      }
      return toDecimal(whole) + std::string(kBin[times]);
    }
    return toDecimal(whole);
  }
  if (nano_ % 1'000'000 == 0) return toDecimal(nano_ / 1'000'000) + "m";
  if (nano_ % 1'000 == 0) return toDecimal(nano_ / 1'000) + "u";
  return toDecimal(nano_) + "n";
}

std::string Amount::strFor(std::string_view name) const {
  const bool binary = name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-");
  return str(binary);
}

long long Amount::floorUnits() const {
  constexpr Int128 kNano = 1'000'000'000;
  Int128 units = nano_ / kNano;
  if (nano_ < 0 && units * kNano != nano_) --units;
  if (units > std::numeric_limits<long long>::max()) return std::numeric_limits<long long>::max();
  if (units < std::numeric_limits<long long>::min()) return std::numeric_limits<long long>::min();
  return static_cast<long long>(units);
}

}  // namespace gpuguard
