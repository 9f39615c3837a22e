#include "rules/k8s/go_strconv.h"

#include <limits>

namespace gpuguard {
namespace {

int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Base 0: the base the prefix names, and the digits after it.
unsigned takeBasePrefix(std::string_view& s) {
  if (s[0] != '0') return 10;
  const char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
  if (p == 'b' || p == 'o' || p == 'x') {
    s.remove_prefix(2);
    return p == 'b' ? 2 : p == 'o' ? 8 : 16;
  }
  s.remove_prefix(1);
  return 8;
}

}  // namespace

std::optional<std::uint64_t> parseGoUint(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  const unsigned radix = base == 0 ? takeBasePrefix(s) : static_cast<unsigned>(base);
  std::uint64_t n = 0;
  for (char c : s) {
    const int d = digitValue(c);
    if (d >= static_cast<int>(radix)) return std::nullopt;
    if (n > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(d)) / radix) return std::nullopt;
    n = n * radix + static_cast<unsigned>(d);
  }
  return n;
}

std::optional<long long> parseGoInt(std::string_view s, int base) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const std::optional<std::uint64_t> u = parseGoUint(s, base);
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;
  if (!u || (negative ? *u > kLimit : *u >= kLimit)) return std::nullopt;
  return negative ? static_cast<long long>(0 - *u) : static_cast<long long>(*u);
}

bool isCanonicalUnsigned(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return s == "0" || s.front() != '0';
}

}  // namespace gpuguard
