// Stage 4a of yaml_to_json.cpp's pipeline: scalar resolution, go-yaml v2.4
// resolve() for an untagged plain scalar, then what sigs.k8s.io/yaml does
// with the result (std::from_chars, no regex).
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "rules/k8s/go_strconv.h"
#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail {
namespace {

// go-yaml's resolveTable: the first byte decides which parses are tried.
constexpr std::array<char, 256> kHint = [] {
  std::array<char, 256> t{};
  t['+'] = 'S';
  t['-'] = 'S';
  for (char c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = 'D';
  for (char c : std::string_view("yYnNtTfFoO~")) t[static_cast<unsigned char>(c)] = 'M';
  t['.'] = '.';
  return t;
}();


bool oneOf(std::string_view s, std::string_view a, std::string_view b, std::string_view c) { return s == a || s == b || s == c; }

// go-yaml's resolveMap (bools, nulls, .inf/.nan), all at most 5 bytes long.
bool lookupResolveMap(std::string_view s, Resolved& r) {
  switch (s.size()) {
    case 0: r = makeNull(); return true;
    case 1:
      if (s == "y" || s == "Y") { r = makeBool(true); return true; }
      if (s == "n" || s == "N") { r = makeBool(false); return true; }
      if (s == "~") { r = makeNull(); return true; }
      return false;
    case 2:
      if (oneOf(s, "on", "On", "ON")) { r = makeBool(true); return true; }
      if (oneOf(s, "no", "No", "NO")) { r = makeBool(false); return true; }
      return false;
    case 3:
      if (oneOf(s, "yes", "Yes", "YES")) { r = makeBool(true); return true; }
      if (oneOf(s, "off", "Off", "OFF")) { r = makeBool(false); return true; }
      return false;
    case 4:
      if (oneOf(s, "true", "True", "TRUE")) { r = makeBool(true); return true; }
      if (oneOf(s, "null", "Null", "NULL")) { r = makeNull(); return true; }
      if (oneOf(s, ".nan", ".NaN", ".NAN")) { r = makeFloat(std::numeric_limits<double>::quiet_NaN()); return true; }
      if (oneOf(s, ".inf", ".Inf", ".INF")) { r = makeFloat(std::numeric_limits<double>::infinity()); return true; }
      return false;
    case 5:
      if (oneOf(s, "false", "False", "FALSE")) { r = makeBool(false); return true; }
      if (oneOf(s, "+.inf", "+.Inf", "+.INF")) { r = makeFloat(std::numeric_limits<double>::infinity()); return true; }
      if (oneOf(s, "-.inf", "-.Inf", "-.INF")) { r = makeFloat(-std::numeric_limits<double>::infinity()); return true; }
      return false;
    default:
      return false;
  }
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool matchesYamlStyleFloat(std::string_view s) {
  std::size_t i = 0, n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < n && s[i] == '.') {
    ++i;
    std::size_t d = i;
    while (i < n && isDigit(s[i])) ++i;
    if (i == d) return false;
  } else {
    std::size_t d = i;
    while (i < n && isDigit(s[i])) ++i;
    if (i == d) return false;
    if (i < n && s[i] == '.') {
      ++i;
      while (i < n && isDigit(s[i])) ++i;
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t d = i;
    while (i < n && isDigit(s[i])) ++i;
    if (i == d) return false;
  }
  return i == n;
}

// strconv.ParseFloat(s, 64) for a plain decimal (sign, digits, '.', exponent;
// no underscores). Overflow is an error in Go (the scalar then stays a
// string); underflow gives zero.
std::optional<double> parseDecimalFloat(std::string_view s) {
  bool neg = false;
  std::string_view body = s;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  double d = 0;
  auto res = std::from_chars(body.data(), body.data() + body.size(), d, std::chars_format::general);
  if (res.ptr != body.data() + body.size()) return std::nullopt;
  if (res.ec == std::errc{}) return neg ? -d : d;
  if (res.ec != std::errc::result_out_of_range) return std::nullopt;
  // Out of range: overflow or underflow? Position of the first significant
  // digit relative to the decimal point, plus the exponent.
  long long magnitude = 0;
  std::size_t i = 0;
  bool significant = false;
  long long intDigits = 0, leadingFractionZeros = 0;
  for (; i < body.size() && isDigit(body[i]); ++i) {
    if (body[i] != '0') significant = true;
    if (significant) ++intDigits;
  }
  if (i < body.size() && body[i] == '.') {
    for (++i; i < body.size() && isDigit(body[i]); ++i) {
      if (!significant && body[i] == '0') ++leadingFractionZeros;
      else significant = true;
    }
  }
  long long exponent = 0;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) eneg = body[i++] == '-';
    for (; i < body.size() && isDigit(body[i]); ++i) exponent = std::min<long long>(exponent * 10 + (body[i] - '0'), 1'000'000'000'000LL);
    if (eneg) exponent = -exponent;
  }
  magnitude = (intDigits > 0 ? intDigits : -leadingFractionZeros) + exponent;
  if (magnitude > 0) return std::nullopt;  // overflow: ParseFloat returns ErrRange
  return neg ? -0.0 : 0.0;
}

// Go's underscoreOK: '_' only between digits (or after a base prefix).
bool goUnderscoreOK(std::string_view s) {
  char saw = '^';
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0' && (((s[1] | 0x20) == 'b') || ((s[1] | 0x20) == 'o') || ((s[1] | 0x20) == 'x'))) {
    i = 2;
    saw = '0';
    hex = (s[1] | 0x20) == 'x';
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (isDigit(c) || (hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

// strconv.ParseFloat for a string that starts with '.' (go-yaml's '.'
// hint passes the text as is, so Go's own underscore rules apply).
std::optional<double> parseDotFloat(std::string_view s) {
  std::size_t i = 1, n = s.size();
  bool digits = false;
  for (; i < n && (isDigit(s[i]) || s[i] == '_'); ++i) digits |= isDigit(s[i]);
  if (!digits) return std::nullopt;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= n || !isDigit(s[i])) return std::nullopt;
    while (i < n && (isDigit(s[i]) || s[i] == '_')) ++i;
  }
  if (i != n) return std::nullopt;
  if (s.find('_') == npos) return parseDecimalFloat(s);
  if (!goUnderscoreOK(s)) return std::nullopt;
  std::string plain;
  for (char c : s)
    if (c != '_') plain += c;
  return parseDecimalFloat(plain);
}


}  // namespace

// go-yaml v2.4 resolve("", in): what an untagged plain scalar becomes.
Resolved resolvePlain(std::string_view in) {
  Resolved r;
  char hint = in.empty() ? 'N' : kHint[static_cast<unsigned char>(in[0])];
  if (hint == 0) return r;  // string
  if (lookupResolveMap(in, r)) return r;
  switch (hint) {
    case '.':
      if (auto d = parseDotFloat(in)) return makeFloat(*d);
      return r;
    case 'D':
    case 'S': {
      // (A YYYY-MM-DD timestamp is tried first; into interface{} it stays a
      // string, and nothing that looks like one parses as a number.)
      std::string_view plain = in;
      std::string buffer;
      if (in.find('_') != npos) {
        buffer.reserve(in.size());
        for (char c : in)
          if (c != '_') buffer += c;
        plain = buffer;
      }
      if (const auto i = parseGoInt(plain, 0)) { r.i = *i; r.kind = Kind::Int; return r; }
      if (const auto u = parseGoUint(plain, 0)) { r.u = *u; r.kind = Kind::Uint; return r; }
      if (matchesYamlStyleFloat(plain)) {
        if (auto d = parseDecimalFloat(plain)) return makeFloat(*d);
      }
      // go-yaml's extra "0b"/"-0b" branches are covered by ParseInt(s, 0).
      return r;
    }
    default:  // 'M': only the map entries above
      return r;
  }
}

// Go's time.Parse with go-yaml's allowedTimestampFormats, approximately:
// 2006-1-2, 2006-1-2 15:4:5[.frac], 2006-1-2T15:4:5[.frac](Z|+07:00).
bool looksLikeTimestamp(std::string_view s) {
  std::size_t i = 0, n = s.size();
  auto num = [&](std::size_t minDigits, std::size_t maxDigits, int maxValue) {
    std::size_t start = i;
    int v = 0;
    while (i < n && i - start < maxDigits && isDigit(s[i])) v = v * 10 + (s[i++] - '0');
    return i - start >= minDigits && v <= maxValue;
  };
  auto lit = [&](char c) { return i < n && s[i] == c ? (++i, true) : false; };
  if (!num(4, 4, 9999) || !lit('-') || !num(1, 2, 12) || !lit('-') || !num(1, 2, 31)) return false;
  if (i == n) return true;
  char sep = s[i++];
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  if (!num(1, 2, 23) || !lit(':') || !num(1, 2, 59) || !lit(':') || !num(1, 2, 59)) return false;
  if (lit('.') && !num(1, 9, 999999999)) return false;
  if (sep == ' ') return i == n;
  if (lit('Z')) return i == n;
  if (i < n && (s[i] == '+' || s[i] == '-')) {
    ++i;
    return num(2, 2, 23) && lit(':') && num(2, 2, 59) && i == n;
  }
  return false;
}

// encoding/base64 StdEncoding.DecodeString (padding required, CR/LF ignored).
std::optional<std::string> decodeBase64(std::string_view in) {
  std::string s;
  s.reserve(in.size());
  for (char c : in)
    if (c != '\r' && c != '\n') s += c;
  if (s.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(s.size() / 4 * 3);
  for (std::size_t i = 0; i < s.size(); i += 4) {
    bool last = i + 4 == s.size();
    int pad = 0;
    if (last && s[i + 3] == '=') pad = s[i + 2] == '=' ? 2 : 1;
    int v[4];
    for (int k = 0; k < 4 - pad; ++k)
      if ((v[k] = value(s[i + static_cast<std::size_t>(k)])) < 0) return std::nullopt;
    for (int k = 4 - pad; k < 4; ++k) v[k] = 0;
    std::uint32_t w = (std::uint32_t(v[0]) << 18) | (std::uint32_t(v[1]) << 12) | (std::uint32_t(v[2]) << 6) | std::uint32_t(v[3]);
    out += static_cast<char>(w >> 16);
    if (pad < 2) out += static_cast<char>((w >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(w & 0xFF);
  }
  return out;
}

// strconv.FormatFloat(v, 'g', -1, 32): how sigs.k8s.io/yaml spells a float
// map key (1.5 -> "1.5", 1e6 -> "1e+06", .inf -> ".inf").
std::string goFormatFloatKey(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  float f = static_cast<float>(v);
  if (std::isinf(f)) return f > 0 ? ".inf" : "-.inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  bool neg = !sci.empty() && sci[0] == '-';
  if (neg) sci.remove_prefix(1);
  std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exp10 = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp10);
  if (digits == "0") exp10 = 0;
  int nd = static_cast<int>(digits.size());
  int dp = exp10 + 1;
  std::string out = neg ? "-" : "";
  int x = dp - 1;
  if (x < -4 || x >= 6) {  // %e, shortest digits, at least two exponent digits
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    out += x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax < 10) out += '0';
    out += std::to_string(ax);
    return out;
  }
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-dp), '0');
    out += digits;
  } else if (nd <= dp) {
    out += digits;
    out.append(static_cast<std::size_t>(dp - nd), '0');
  } else {
    out.append(digits, 0, static_cast<std::size_t>(dp));
    out += '.';
    out.append(digits, static_cast<std::size_t>(dp));
  }
  return out;
}

std::string_view kindTagName(Kind k) {
  switch (k) {
    case Kind::Null: return "!!null";
    case Kind::Bool: return "!!bool";
    case Kind::Int:
    case Kind::Uint: return "!!int";
    case Kind::Float: return "!!float";
    case Kind::String: return "!!str";
  }
  return "!!str";
}

}  // namespace gpuguard::yaml::detail
