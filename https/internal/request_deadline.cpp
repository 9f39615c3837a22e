#include "https/internal/request_deadline.h"

#include <cstdint>
#include <limits>
#include <string>

namespace gpuguard::webhook {

namespace {

// Nanoseconds per unit, or 0 for an unknown unit.
std::int64_t unitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1000;  // u, µ (micro sign), μ (mu)
  if (unit == "ms") return 1000'000;
  if (unit == "s") return 1000'000'000;
  if (unit == "m") return 60LL * 1000'000'000;
  if (unit == "h") return 3600LL * 1000'000'000;
  return 0;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// `%C2%B5` (a percent-encoded µ, as url.Values.Encode writes it) becomes µ;
// other escapes stay as they are and fail to parse as a duration.
std::string decodeMicroSign(std::string_view value) {
  std::string out(value);
  for (std::size_t at; (at = out.find("%C2%B5")) != std::string::npos;) out.replace(at, 6, "\xC2\xB5");
  return out;
}

}  // namespace

std::optional<std::chrono::nanoseconds> parseGoDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0;
  while (!text.empty()) {
    // The number: integer part, optional fraction; at least one digit.
    std::size_t i = 0;
    std::int64_t whole = 0;
    for (; i < text.size() && isDigit(text[i]); ++i) {
      if (whole > (kMax - 9) / 10) return std::nullopt;
      whole = whole * 10 + (text[i] - '0');
    }
    bool digits = i > 0;
    std::int64_t fraction = 0, scale = 1;
    if (i < text.size() && text[i] == '.') {
      for (++i; i < text.size() && isDigit(text[i]); ++i) {
        digits = true;
        if (scale < 1000'000'000'000LL) {  // beyond nanoseconds of an hour, digits do not count
          fraction = fraction * 10 + (text[i] - '0');
          scale *= 10;
        }
      }
    }
    if (!digits) return std::nullopt;
    std::size_t unitEnd = i;
    while (unitEnd < text.size() && !isDigit(text[unitEnd]) && text[unitEnd] != '.') ++unitEnd;
    const std::int64_t unit = unitNanos(text.substr(i, unitEnd - i));
    if (unit == 0) return std::nullopt;
    if (whole > kMax / unit) return std::nullopt;
    const std::int64_t value = whole * unit + static_cast<std::int64_t>(static_cast<long double>(fraction) * unit / scale);
    if (value > kMax - total) return std::nullopt;
    total += value;
    text.remove_prefix(unitEnd);
  }
  return std::chrono::nanoseconds(total);
}

std::optional<std::chrono::nanoseconds> timeoutParameter(std::string_view target) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  if (const std::size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.substr(0, 8) != "timeout=") continue;
    auto d = parseGoDuration(decodeMicroSign(pair.substr(8)));
    if (d && d->count() > 0) return d;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace gpuguard::webhook
