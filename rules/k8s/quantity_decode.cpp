// Quantity.UnmarshalJSON: how the API server reads a JSON value into a
// Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go).
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/k8s/quantity.h"

namespace gpuguard {

using nlohmann::json;

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8LengthAt(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  const std::size_t n = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  unsigned cp = b0 & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string goJsonStringBody(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      // encoding/json's htmlSafeSet: quotes, backslashes, controls and <>& are escaped.
      if (b == '"' || b == '\\') out += {'\\', static_cast<char>(b)};
      else if (b == '\n') out += "\\n";
      else if (b == '\r') out += "\\r";
      else if (b == '\t') out += "\\t";
      else if (b < 0x20 || b == '<' || b == '>' || b == '&') out += std::string("\\u00") + kHex[b >> 4] + kHex[b & 0xF];
      else out += static_cast<char>(b);
      ++i;
      continue;
    }
    const std::size_t n = utf8LengthAt(s, i);
    if (n == 0) {
      out += "\\ufffd";  // invalid UTF-8
      ++i;
    } else if (n == 3 && b == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 3;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

QuantityValue decodeQuantity(const json& value) {
  QuantityValue out;
  switch (value.type()) {
    case json::value_t::string: {
      out.text = value.get_ref<const std::string&>();
      // The API server reads the raw JSON token, escapes and all (kubectl
      // writes the string as Go's encoding/json does): "1\n" arrives as the
      // five bytes 1\n between quotes, which TrimSpace keeps (reference §1.6).
      const std::string raw = goJsonStringBody(out.text);
      out.jsonEscaped = raw != out.text;
      out.quantity = Quantity::parseTrimmed(raw, &out.error);
      return out;
    }
    case json::value_t::number_integer:
      out.text = std::to_string(value.get<std::int64_t>());
      break;
    case json::value_t::number_unsigned:
      out.text = std::to_string(value.get<std::uint64_t>());
      break;
    case json::value_t::number_float: {
      // The shortest text that reads back as the same double: what a YAML or
      // JSON author wrote, as far as a double can tell (0.5, 1, 1e+21).
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, value.get<double>());
      out.text.assign(buf, res.ptr);
      break;
    }
    case json::value_t::null:
      out.text = "null";
      out.quantity = Quantity::parse("0");
      return out;
    default:
      out.text = value.dump();
      out.error = QuantityError::FormatWrong;
      return out;
  }
  out.quantity = Quantity::parse(out.text, &out.error);
  return out;
}

}  // namespace gpuguard
