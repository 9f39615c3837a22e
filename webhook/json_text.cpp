#include "webhook/json_text.h"

#include "text/utf8.h"

namespace gpuguard::webhook {

char32_t decodeUtf8(std::string_view s, std::size_t& i) {
  const utf8::Decoded c = utf8::decode(s, i);
  if (c.error != utf8::Error::None) {
    ++i;
    return kReplacementCharacter;
  }
  i += c.length;
  return c.codePoint;
}

void appendUtf8(std::string& out, char32_t codePoint) { utf8::append(out, codePoint); }

std::size_t runeCount(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++n) decodeUtf8(text, i);
  return n;
}

std::string_view firstRunes(std::string_view text, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t r = 0; r < n && i < text.size(); ++r) decodeUtf8(text, i);
  return text.substr(0, i);
}

namespace {

// Bytes a JSON string literal carries as they are: printable ASCII other
// than the quote and the backslash (DEL is escaped, as Go's encoder does).
bool plainJsonByte(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

}  // namespace

void appendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy plain runs in one go: most of a reply is plain ASCII.
    std::size_t end = i;
    while (end < s.size() && plainJsonByte(static_cast<unsigned char>(s[end]))) ++end;
    out.append(s, i, end - i);
    if (end == s.size()) break;
    i = end;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const utf8::Decoded u = utf8::decode(s, i);
      if (u.error == utf8::Error::None) {
        out.append(s, i, u.length);
        i += u.length;
      } else {
        appendUtf8(out, kReplacementCharacter);  // an invalid byte
        ++i;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:  // the other controls and DEL
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out += '"';
}

}  // namespace gpuguard::webhook
