// Stage 1 of yaml_to_json.cpp's pipeline: input checks (encoding and the
// characters go-yaml's reader accepts).
#include <cstdint>
#include <string>
#include <string_view>

#include "text/utf8.h"
#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail {
namespace {

std::string byteHex(unsigned char c) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  s += digits[c >> 4];
  s += digits[c & 15];
  return s;
}

std::string codePointName(std::uint32_t cp) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "U+";
  int width = cp > 0xFFFF ? 6 : 4;
  for (int i = width - 1; i >= 0; --i) s += digits[(cp >> (4 * i)) & 15];
  return s;
}

}  // namespace

// First byte go-yaml's reader would refuse: invalid UTF-8, or a character
// outside  #x9 | #xA | #xD | [#x20-#x7E] | #x85 | [#xA0-#xD7FF] |
// [#xE000-#xFFFD] | [#x10000-#x10FFFF].
TextProblem firstTextProblem(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  while (i < n) {
    // Fast path: 8 printable ASCII bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      std::uint64_t below20 = (w - ones * 0x20) & ~w & highs;  // some byte < 0x20 (or >= 0x80)
      std::uint64_t x7f = w ^ (ones * 0x7F);
      std::uint64_t is7f = (x7f - ones) & ~x7f & highs;
      if ((w & highs) || below20 || is7f) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = p[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)
        return {i, "control character " + codePointName(c) + " is not allowed in YAML"};
      ++i;
      continue;
    }
    const utf8::Decoded u = utf8::decode(s, i);
    switch (u.error) {
      case utf8::Error::None: break;
      case utf8::Error::BadLeadByte:
        return {i, "invalid UTF-8: byte " + byteHex(c) + " cannot start a character (is the file UTF-8?)"};
      case utf8::Error::Truncated: return {i, "invalid UTF-8: truncated multi-byte character at the end of the input"};
      case utf8::Error::MissingContinuation:
        return {i, "invalid UTF-8: byte " + byteHex(c) + " is not followed by a continuation byte (is the file UTF-8?)"};
      case utf8::Error::OverlongOrOutOfRange: return {i, "invalid UTF-8: overlong or out-of-range encoding"};
      case utf8::Error::Surrogate: return {i, "invalid UTF-8: encoded surrogate " + codePointName(u.codePoint)};
    }
    const std::uint32_t cp = u.codePoint;
    const int len = u.length;
    if ((cp >= 0x80 && cp <= 0x9F && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF)
      return {i, "character " + codePointName(cp) + " is not allowed in YAML"};
    i += static_cast<std::size_t>(len);
  }
  return {};
}

// UTF-16 (after its BOM) -> UTF-8; unpaired surrogates become U+FFFD, as
// kubectl's unicode.BOMOverride decoder does.
std::string utf16ToUtf8(std::string_view s, bool bigEndian) {
  std::string out;
  out.reserve(s.size());
  auto unit = [&](std::size_t i) -> std::uint32_t {
    auto a = static_cast<unsigned char>(s[i]), b = static_cast<unsigned char>(s[i + 1]);
    return bigEndian ? (std::uint32_t{a} << 8 | b) : (std::uint32_t{b} << 8 | a);
  };
  std::size_t i = 0;
  for (; i + 1 < s.size(); i += 2) {
    std::uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < s.size()) {
      std::uint32_t v = unit(i + 2);
      if (v >= 0xDC00 && v <= 0xDFFF) {
        utf8::append(out, 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00));
        i += 2;
        continue;
      }
    }
    utf8::append(out, (u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u);
  }
  if (i < s.size()) utf8::append(out, 0xFFFD);
  return out;
}

// Replaces invalid UTF-8 with U+FFFD, byte by byte (what Go's json.Marshal
// does to a !!binary string before kubectl sends it).
std::string sanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const utf8::Decoded u = utf8::decode(s, i);
    if (u.error == utf8::Error::None) {
      out.append(s.substr(i, u.length));
      i += u.length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::optional<std::string> loneCrAsLf(std::string_view s) {
  std::size_t cr = s.find('\r');
  while (cr != npos && cr + 1 < s.size() && s[cr + 1] == '\n') cr = s.find('\r', cr + 2);
  if (cr == npos) return std::nullopt;
  std::string out(s);
  for (std::size_t i = cr; i < out.size(); ++i) {
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  }
  return out;
}

}  // namespace gpuguard::yaml::detail
