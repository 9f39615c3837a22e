// YAML -> JSON the way kubectl does it (see yaml_to_json.h for the summary).
//
// Pipeline, per call of parseStream():
//
//  1. Input checks. The whole input must fit Limits::maxDocumentBytes. A
//     UTF-8 BOM is dropped, a UTF-16 BOM converts the text to UTF-8 (as
//     kubectl's FileVisitor does). The text must be valid UTF-8 made of the
//     characters go-yaml's reader accepts (tab, LF, CR, printable ASCII,
//     NEL, U+00A0..U+D7FF, U+E000..U+FFFD, U+10000..): go-yaml fails with
//     "control characters are not allowed" / "invalid leading UTF-8 octet".
//
//  2. Sections. kubectl never hands a whole stream to go-yaml: the
//     apimachinery YAMLReader cuts it on lines that start with "---" (the
//     rest of the line may only be blanks or a comment, otherwise "invalid
//     Yaml document separator"), skips empty sections and parses each
//     section as one YAML document (go-yaml's Unmarshal reads the first
//     document only). We cut exactly the same way and parse each section
//     with its own yaml-cpp Parser.
//
//  3. Pre-scan of each section (class Prescan), before yaml-cpp sees it.
//     yaml-cpp 0.7 does not overflow the stack on deep nesting: its
//     SingleDocParser has a DepthGuard<500> and throws DeepRecursion (we
//     checked 100000 '[' and 100000 nested "- " items: both throw at depth
//     500, the scanner itself is iterative). But yaml-cpp's scanner queues
//     every token of a flow collection until the collection closes (any '['
//     or '{' might start a simple key), at ~100 bytes per byte of input:
//     1.6 MB of '[' costs 375 MB, 64 MB would cost ~15 GB. A huge scalar is
//     slow (50 MB: 7 s). So a cheap line-based scanner that knows quotes,
//     comments, block scalars and plain multi-line scalars measures flow
//     nesting, flow collection size and scalar size, and rejects a section
//     that exceeds Limits::maxDepth / maxFlowBytes / maxScalarBytes quickly
//     and with the position of the offending bracket or scalar. It errs on
//     the side of under-counting, so valid YAML within the limits is never
//     rejected; anything it misses is still caught by yaml-cpp's own depth
//     guard and by the builder's limits below.
//
//  4. yaml-cpp events -> nlohmann::json (class Builder, a YAML::EventHandler;
//     no YAML::Node tree, no YAML::convert, no stringstream). Scalars are
//     resolved by hand like go-yaml v2.4 resolve() (std::from_chars, no
//     regex); JSON pointers are built in one reused string. Aliases are
//     expanded by copying the anchored JSON, after checking Limits::maxNodes,
//     Limits::maxDepth and go-yaml's "excessive aliasing" ratio, so a
//     billion-laughs document fails before anything is expanded.
//
// Known differences from go-yaml that are out of scope: yaml-cpp is the
// grammar (it accepts a few things libyaml rejects; the important ones, tabs
// used as indentation and an unterminated quoted scalar at the end of a
// document, are checked here), NEL/LS/PS are not line breaks, a section
// holding only a %YAML directive gives a null document (go-yaml: error).
//
// A stream whose first non-space character is '{' is read as JSON, as
// kubectl does (json_stream.cpp). A section that cannot be parsed is an
// error and parsing goes on with the next section, so one bad document does
// not hide the others.
#include "yaml/yaml_to_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <istream>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <set>
#include <streambuf>
#include <system_error>
#include <utility>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "text/utf8.h"
#include "yaml/json_stream.h"

namespace gpuguard::yaml {

// ---------------------------------------------------------------------------
// SourceMap

std::size_t SourceMap::lowerBound(std::string_view pointer) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), pointer,
                             [this](std::uint32_t i, std::string_view p) {
                               return std::string_view(entries_[i].pointer) < p;
                             });
  return static_cast<std::size_t>(it - sorted_.begin());
}

void SourceMap::add(std::string pointer, NodeOrigin origin) {
  std::size_t k = lowerBound(pointer);
  if (k < sorted_.size() && entries_[sorted_[k]].pointer == pointer) {
    entries_[sorted_[k]].origin = std::move(origin);
    return;
  }
  entries_.push_back(Entry{std::move(pointer), std::move(origin)});
  sorted_.insert(sorted_.begin() + static_cast<std::ptrdiff_t>(k),
                 static_cast<std::uint32_t>(entries_.size() - 1));
}

const NodeOrigin* SourceMap::find(std::string_view pointer) const {
  std::size_t k = lowerBound(pointer);
  if (k < sorted_.size() && entries_[sorted_[k]].pointer == pointer) return &entries_[sorted_[k]].origin;
  return nullptr;
}

Position SourceMap::locate(std::string_view pointer) const {
  for (;;) {
    if (const NodeOrigin* o = find(pointer)) return o->position;
    if (pointer.empty()) return {};
    std::size_t slash = pointer.rfind('/');
    pointer = pointer.substr(0, slash == std::string_view::npos ? 0 : slash);
  }
}

// Bulk construction for the builder: one sort instead of n sorted inserts.
class SourceMapBuilder {
 public:
  static void assign(SourceMap& map, std::vector<SourceMap::Entry> entries) {
    map.entries_ = std::move(entries);
    map.sorted_.resize(map.entries_.size());
    std::iota(map.sorted_.begin(), map.sorted_.end(), 0u);
    const auto& e = map.entries_;
    std::stable_sort(map.sorted_.begin(), map.sorted_.end(),
                     [&e](std::uint32_t a, std::uint32_t b) { return e[a].pointer < e[b].pointer; });
    // The builder keeps pointers unique; if two ever collide, the later wins.
    auto last = std::unique(map.sorted_.rbegin(), map.sorted_.rend(),
                            [&e](std::uint32_t a, std::uint32_t b) { return e[a].pointer == e[b].pointer; });
    map.sorted_.erase(map.sorted_.begin(), last.base());
  }
};

SourceMap SourceMap::fromEntries(std::vector<Entry> entries) {
  SourceMap map;
  SourceMapBuilder::assign(map, std::move(entries));
  return map;
}

std::string escapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

using json = nlohmann::json;
constexpr std::size_t npos = std::string_view::npos;

void appendEscaped(std::string& out, std::string_view token) {
  if (token.find_first_of("~/") == npos) {
    out.append(token);
    return;
  }
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Code points in s (s is valid UTF-8).
int countChars(std::string_view s) {
  int n = 0;
  for (char c : s) n += isContinuationByte(c) ? 0 : 1;
  return n;
}

bool allAscii(std::string_view s) {
  const char* p = s.data();
  std::size_t n = s.size(), i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ULL) return false;
  }
  for (; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) >= 0x80) return false;
  return true;
}

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

// ---------------------------------------------------------------------------
// Input text: encoding and allowed characters.

struct TextProblem {
  std::size_t offset = npos;
  std::string message;
};

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

// ---------------------------------------------------------------------------
// Scalar resolution: go-yaml v2.4 resolve() for an untagged plain scalar,
// then what sigs.k8s.io/yaml does with the result.

struct Resolved {
  enum class Kind : std::uint8_t { Null, Bool, Int, Uint, Float, String };
  Kind kind = Kind::String;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

using Kind = Resolved::Kind;

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

Resolved makeBool(bool v) { Resolved r; r.kind = Kind::Bool; r.b = v; return r; }
Resolved makeFloat(double v) { Resolved r; r.kind = Kind::Float; r.d = v; return r; }
Resolved makeNull() { Resolved r; r.kind = Kind::Null; return r; }

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

int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// strconv.ParseUint(s, 0, 64) for s without underscores: "0x"/"0X" hex,
// "0b"/"0B" binary, "0o"/"0O" or a leading "0" octal (a prefix needs at
// least one more character: "0x" alone is a syntax error), else decimal.
// No sign.
bool goParseUint(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  unsigned base = 10;
  if (s[0] == '0') {
    char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (p == 'b') { base = 2; s.remove_prefix(2); }
    else if (p == 'o') { base = 8; s.remove_prefix(2); }
    else if (p == 'x') { base = 16; s.remove_prefix(2); }
    else { base = 8; s.remove_prefix(1); }
  }
  std::uint64_t n = 0;
  for (char c : s) {
    int d = digitValue(c);
    if (d >= static_cast<int>(base)) return false;
    if (n > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(d)) / base) return false;  // range
    n = n * base + static_cast<unsigned>(d);
  }
  out = n;
  return true;
}

// strconv.ParseInt(s, 0, 64).
bool goParseInt(std::string_view s, std::int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  std::uint64_t u;
  if (!goParseUint(s, u)) return false;
  constexpr std::uint64_t limit = std::uint64_t{1} << 63;
  if (neg ? u > limit : u >= limit) return false;
  out = neg ? static_cast<std::int64_t>(0 - u) : static_cast<std::int64_t>(u);
  return true;
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
      if (goParseInt(plain, r.i)) { r.kind = Kind::Int; return r; }
      if (goParseUint(plain, r.u)) { r.kind = Kind::Uint; return r; }
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

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// ---------------------------------------------------------------------------
// Pre-scan (see the file comment, step 3).

struct PrescanFailure {
  Position position;
  std::string message;
};

class Prescan {
 public:
  Prescan(std::string_view text, const Limits& limits) : s_(text), lim_(limits) {}

  void reset() {
    mode_ = Mode::Normal;
    owner_ = -1;
    flowDepth_ = 0;
  }

  // One line [b, e) (without its '\n'), line number `line`. Throws
  // PrescanFailure.
  void feedLine(std::size_t b, std::size_t e, int line) {
    line_ = line;
    lb_ = b;
    std::size_t le = e;
    if (le > b && s_[le - 1] == '\r') --le;
    std::size_t ind = b;
    while (ind < le && s_[ind] == ' ') ++ind;
    std::size_t fc = ind;
    while (fc < le && (s_[fc] == ' ' || s_[fc] == '\t')) ++fc;
    const bool blank = fc >= le;
    const int indent = static_cast<int>(ind - b);

    switch (mode_) {
      case Mode::BlockScalar:
        if (blank) return checkScalar(bsStart_, le, bsPos_);
        if (bsIndent_ < 0 ? indent > bsOwner_ : indent >= bsIndent_) {
          if (bsIndent_ < 0) bsIndent_ = indent;
          return checkScalar(bsStart_, le, bsPos_);
        }
        mode_ = Mode::Normal;
        break;
      case Mode::PlainContinuation:
        if (blank) return;
        if (indent > plainOwner_ && s_[fc] != '#') return checkScalar(plainStart_, le, plainPos_);
        mode_ = Mode::Normal;
        break;
      case Mode::Quoted: {
        std::size_t q = scanQuoted(b, le);
        if (q == npos) return checkScalar(quoteStart_, le, quotePos_);
        mode_ = Mode::Normal;
        checkScalar(quoteStart_, q, quotePos_);
        if (quoteInFlow_) return flow(q, le);
        return afterNode(q, le, quoteColumn_);
      }
      case Mode::Normal:
        break;
    }
    if (flowDepth_ > 0) return flow(b, le);
    if (blank) return;
    char c = s_[fc];
    if (c == '#') return;
    if (fc == b && c == '%') return;  // directive
    if (fc == b && le - b >= 3 && s_.compare(b, 3, "...") == 0 && (le - b == 3 || s_[b + 3] == ' ' || s_[b + 3] == '\t'))
      return;  // document end marker
    block(fc, le);
  }

 private:
  enum class Mode { Normal, BlockScalar, PlainContinuation, Quoted };

  static bool isBlank(char c) { return c == ' ' || c == '\t'; }
  bool blankOrEnd(std::size_t p, std::size_t le) const { return p >= le || isBlank(s_[p]); }
  int column(std::size_t p) const { return static_cast<int>(p - lb_); }
  Position positionOf(std::size_t p) const { return {line_, 1 + countChars(s_.substr(lb_, p - lb_))}; }

  [[noreturn]] void fail(Position at, std::string message) const { throw PrescanFailure{at, std::move(message)}; }

  void checkScalar(std::size_t start, std::size_t end, Position at) const {
    if (end - start > lim_.maxScalarBytes)
      fail(at, "scalar is larger than the limit of " + std::to_string(lim_.maxScalarBytes) + " bytes");
  }
  void checkFlow(std::size_t end) const {
    if (end - flowStart_ > lim_.maxFlowBytes)
      fail(flowPos_, "flow collection ([...] or {...}) is larger than the limit of " + std::to_string(lim_.maxFlowBytes) +
                         " bytes");
  }

  // Inside a quoted scalar (quote_): the offset just past the closing
  // quote, or npos if it continues on the next line.
  std::size_t scanQuoted(std::size_t p, std::size_t le) const {
    if (quote_ == '"') {
      for (; p < le; ++p) {
        if (s_[p] == '\\') ++p;
        else if (s_[p] == '"') return p + 1;
      }
    } else {
      for (; p < le; ++p) {
        if (s_[p] != '\'') continue;
        if (p + 1 < le && s_[p + 1] == '\'') ++p;
        else return p + 1;
      }
    }
    return npos;
  }

  void startQuote(std::size_t p, bool inFlow) {
    quote_ = s_[p];
    quoteStart_ = p;
    quotePos_ = positionOf(p);
    quoteColumn_ = column(p);
    quoteInFlow_ = inFlow;
  }

  // Block context, at the start of a node (line start, after "- ", "? ",
  // ": " or node properties).
  void block(std::size_t p, std::size_t le) {
    for (;;) {
      while (p < le && isBlank(s_[p])) ++p;
      if (p >= le) return;
      const char c = s_[p];
      if ((c == '-' || c == '?' || c == ':') && blankOrEnd(p + 1, le)) {
        if (c != ':') owner_ = column(p);
        ++p;
        continue;
      }
      switch (c) {
        case '#':
          return;
        case '&':
        case '!':
          while (p < le && !isBlank(s_[p])) ++p;
          continue;
        case '*': {
          int col = column(p);
          while (p < le && !isBlank(s_[p])) ++p;
          return afterNode(p, le, col);
        }
        case '[':
        case '{':
          flowColumn_ = column(p);
          return flow(p, le);
        case '"':
        case '\'': {
          startQuote(p, false);
          std::size_t q = scanQuoted(p + 1, le);
          if (q == npos) {
            mode_ = Mode::Quoted;
            return checkScalar(p, le, quotePos_);
          }
          checkScalar(p, q, quotePos_);
          return afterNode(q, le, quoteColumn_);
        }
        case '|':
        case '>': {
          mode_ = Mode::BlockScalar;
          bsOwner_ = owner_;
          bsIndent_ = -1;
          bsStart_ = p;
          bsPos_ = positionOf(p);
          for (std::size_t h = p + 1; h < le && !isBlank(s_[h]) && s_[h] != '#'; ++h)
            if (s_[h] >= '1' && s_[h] <= '9') bsIndent_ = (owner_ >= 0 ? owner_ : 0) + (s_[h] - '0');
          return;
        }
        default:
          break;
      }
      // A plain scalar: a key if ": " follows on this line, a value otherwise
      // (which may continue on more-indented lines).
      const std::size_t start = p;
      for (;; ++p) {
        if (p >= le) {
          mode_ = Mode::PlainContinuation;
          plainOwner_ = owner_;
          plainStart_ = start;
          plainPos_ = positionOf(start);
          return checkScalar(start, le, plainPos_);
        }
        const char d = s_[p];
        if (d == ':' && blankOrEnd(p + 1, le)) {
          owner_ = column(start);
          ++p;
          break;
        }
        if (d == '#' && isBlank(s_[p - 1])) return;
      }
    }
  }

  // After a quoted scalar, an alias or a flow collection in block context:
  // ": " makes it a key and a value may follow.
  void afterNode(std::size_t p, std::size_t le, int startColumn) {
    while (p < le && isBlank(s_[p])) ++p;
    if (p < le && s_[p] == ':' && blankOrEnd(p + 1, le)) {
      owner_ = startColumn;
      block(p + 1, le);
    }
  }

  // Flow context ([...] / {...}), possibly spanning lines.
  void flow(std::size_t p, std::size_t le) {
    bool afterBlank = true;
    while (p < le) {
      const char c = s_[p];
      switch (c) {
        case ' ':
        case '\t':
          afterBlank = true;
          ++p;
          continue;
        case '#':
          if (afterBlank) return checkFlow(le);
          break;
        case '[':
        case '{':
          if (flowDepth_ == 0) {
            flowStart_ = p;
            flowPos_ = positionOf(p);
          }
          if (static_cast<std::size_t>(++flowDepth_) > lim_.maxDepth)
            fail(positionOf(p), "flow collections nested deeper than the limit of " + std::to_string(lim_.maxDepth) +
                                    " levels");
          lastSignificant_ = c;
          afterBlank = false;
          ++p;
          continue;
        case ']':
        case '}':
          lastSignificant_ = c;
          afterBlank = false;
          ++p;
          if (flowDepth_ > 0 && --flowDepth_ == 0) {
            checkFlow(p);
            return afterNode(p, le, flowColumn_);
          }
          continue;
        case '"':
        case '\'':
          if (std::strchr("[{,:?", lastSignificant_) != nullptr) {
            startQuote(p, true);
            std::size_t q = scanQuoted(p + 1, le);
            if (q == npos) {
              mode_ = Mode::Quoted;
              return checkScalar(p, le, quotePos_);
            }
            checkScalar(p, q, quotePos_);
            lastSignificant_ = c;
            afterBlank = false;
            p = q;
            continue;
          }
          break;
        default:
          break;
      }
      lastSignificant_ = c;
      afterBlank = false;
      ++p;
    }
    checkFlow(le);
  }

  std::string_view s_;
  const Limits& lim_;
  int line_ = 1;
  std::size_t lb_ = 0;  // current line begin
  Mode mode_ = Mode::Normal;
  int owner_ = -1;  // column of the node that owns what follows (key, "-", "?")
  // block scalar
  int bsOwner_ = -1, bsIndent_ = -1;
  std::size_t bsStart_ = 0;
  Position bsPos_;
  // plain multi-line scalar
  int plainOwner_ = -1;
  std::size_t plainStart_ = 0;
  Position plainPos_;
  // quoted scalar
  char quote_ = '"';
  std::size_t quoteStart_ = 0;
  Position quotePos_;
  int quoteColumn_ = 0;
  bool quoteInFlow_ = false;
  // flow collection
  int flowDepth_ = 0;
  std::size_t flowStart_ = 0;
  Position flowPos_;
  int flowColumn_ = 0;
  char lastSignificant_ = '[';
};

// A section of the stream that kubectl parses as one document.
struct Section {
  std::size_t begin = 0, end = 0;  // [begin, end) in the (UTF-8) text
  int firstLine = 1;
  bool ascii = true;
  std::optional<ParseError> error;  // do not parse: report this
};

bool isGoSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::string_view trimGoSpace(std::string_view s) {
  while (!s.empty() && isGoSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isGoSpace(s.back())) s.remove_suffix(1);
  // U+0085 and U+00A0 are unicode.IsSpace too.
  while (s.size() >= 2 && s[0] == '\xC2' && (s[1] == '\x85' || s[1] == '\xA0')) s.remove_prefix(2);
  while (s.size() >= 2 && s[s.size() - 2] == '\xC2' && (s.back() == '\x85' || s.back() == '\xA0')) s.remove_suffix(2);
  return s;
}

// Splits like apimachinery's YAMLReader and pre-scans each section. A
// section with a problem carries its error, and splitting goes on at the
// next separator, so the sections after it are still parsed. An invalid
// separator line ("--- !tag") is a section of its own holding the error:
// the documents on both sides of it are parsed.
std::vector<Section> splitSections(std::string_view s, const Limits& limits) {
  std::vector<Section> sections;
  TextProblem bad = firstTextProblem(s);
  Prescan scan(s, limits);
  Section cur;
  bool curEmpty = true;
  std::size_t pos = 0;
  int line = 1;
  auto close = [&](std::size_t end) {
    cur.end = end;
    cur.ascii = allAscii(s.substr(cur.begin, cur.end - cur.begin));
    sections.push_back(std::move(cur));
  };
  auto open = [&](std::size_t begin, int firstLine) {
    cur = Section{};
    cur.begin = begin;
    cur.firstLine = firstLine;
    curEmpty = true;
    scan.reset();
  };
  while (pos < s.size()) {
    const char* nl = static_cast<const char*>(std::memchr(s.data() + pos, '\n', s.size() - pos));
    const std::size_t lineEnd = nl ? static_cast<std::size_t>(nl - s.data()) : s.size();
    const std::size_t next = nl ? lineEnd + 1 : s.size();
    std::optional<ParseError> lineProblem;
    if (bad.offset < next) {
      lineProblem = ParseError{{line, 1 + countChars(s.substr(pos, bad.offset - pos))}, bad.message};
      bad = firstTextProblem(s.substr(next));
      if (bad.offset != npos) bad.offset += next;
    }
    if (lineEnd - pos >= 3 && s.compare(pos, 3, "---") == 0) {
      const std::string_view rest = trimGoSpace(s.substr(pos + 3, lineEnd - pos - 3));
      if (!curEmpty) close(pos);
      if (!lineProblem && !rest.empty() && rest[0] != '#') {
        lineProblem = ParseError{{line, 1 + countChars(s.substr(pos, static_cast<std::size_t>(rest.data() - s.data()) - pos))},
                                 "invalid document separator \"" + std::string(s.substr(pos, lineEnd - pos)) +
                                     "\": only blanks or a comment may follow \"---\" on a separator line (kubectl: \"invalid Yaml "
                                     "document separator: " + std::string(rest) + "\"; it stops there and does not apply "
                                     "the document above the line either)"};
      }
      if (lineProblem) {
        open(pos, line);
        cur.error = std::move(lineProblem);
        close(next);
      }
      open(next, line + 1);
    } else {
      curEmpty = false;
      if (lineProblem && !cur.error) cur.error = std::move(lineProblem);
      if (!cur.error) {
        try {
          scan.feedLine(pos, lineEnd, line);
        } catch (const PrescanFailure& f) {
          cur.error = ParseError{f.position, f.message};
        }
      }
    }
    pos = next;
    ++line;
  }
  if (!curEmpty) close(s.size());
  return sections;
}

// ---------------------------------------------------------------------------
// Builder: yaml-cpp events -> JSON + source map.

struct BuildError {
  Position position;
  std::string message;
};

struct RelEntry {
  std::string rel;  // pointer relative to the anchored/merged node ("" = itself)
  NodeOrigin origin;
};

struct AnchorRecord {
  std::string name;
  bool done = false;
  json value;
  std::vector<RelEntry> entries;
  std::uint64_t decodes = 0;  // go-yaml decode operations to expand it
  std::size_t depth = 0;      // JSON nesting depth of `value`
};

struct MergeSource {
  YAML::anchor_t anchor = 0;  // an alias "*a"; else the inline map below
  json value;
  std::vector<RelEntry> entries;
  std::size_t depth = 0;
};

struct LogEntry {
  std::string pointer;
  NodeOrigin origin;
  bool live = true;
};

struct Frame {
  enum class Kind : std::uint8_t { Map, Seq };
  // Normal: a JSON container. MergeMap: the inline map of "<<: {...}".
  // MergeSeq: the sequence of "<<: [...]". MergeItem: an inline map in it.
  enum class Role : std::uint8_t { Normal, MergeMap, MergeSeq, MergeItem };
  Kind kind = Kind::Map;
  Role role = Role::Normal;
  bool flow = false;
  bool expectKey = true;
  bool keyIsMerge = false;
  bool hadMerge = false;
  json* value = nullptr;
  std::unique_ptr<json> owned;  // MergeMap / MergeItem
  std::size_t ptrLen = 0;       // this container's pointer is ptr_[0, ptrLen)
  std::size_t logStart = 0;     // first log entry of this subtree
  std::size_t index = 0;        // next sequence index
  std::size_t maxChildDepth = 0;
  YAML::anchor_t anchor = 0;
  std::uint64_t decodesAtStart = 0;
  Position start;
  std::string key;
  Position keyPos;
  std::unique_ptr<std::set<std::string, std::less<>>> explicitKeys;  // once a merge happened
  std::vector<MergeSource> sources;                                   // MergeSeq
};

constexpr std::string_view kMergeTag = "tag:yaml.org,2002:merge";

// go-yaml's allowedAliasRatio (decode.go).
double allowedAliasRatio(std::uint64_t decodeCount) {
  constexpr double low = 400000, high = 4000000;
  if (static_cast<double>(decodeCount) <= low) return 0.99;
  if (static_cast<double>(decodeCount) >= high) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(decodeCount) - low) / (high - low));
}

class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(const Limits& limits) : lim_(limits) {}

  void begin(std::string_view chunk, int firstLine, bool ascii, Document* doc) {
    chunk_ = chunk;
    firstLine_ = firstLine;
    ascii_ = ascii;
    doc_ = doc;
    ptr_.clear();
    frames_.clear();
    log_.clear();
    log_.reserve(chunk.size() / 24 + 16);
    anchors_.clear();
    pendingAnchorName_.clear();
    decodes_ = 0;
    aliasDecodes_ = 0;
    lastScalarPos_ = -1;
    lastScalarPlain_ = true;
  }

  // After the document's events: the unterminated-quote check and the
  // source map.
  void finish() {
    checkLastQuotedScalar();
    std::size_t live = 0;
    for (const LogEntry& e : log_) live += e.live ? 1 : 0;
    std::vector<SourceMap::Entry> entries;
    entries.reserve(live);
    for (LogEntry& e : log_)
      if (e.live) entries.push_back(SourceMap::Entry{std::move(e.pointer), std::move(e.origin)});
    SourceMapBuilder::assign(doc_->sources, std::move(entries));
    log_.clear();
  }

  Position position(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0 || m.column < 0) return {firstLine_, 1};
    int col = m.column + 1;
    if (!ascii_ && m.pos >= m.column && static_cast<std::size_t>(m.pos) <= chunk_.size())
      col = 1 + countChars(chunk_.substr(static_cast<std::size_t>(m.pos - m.column), static_cast<std::size_t>(m.column)));
    return {firstLine_ + m.line, col};
  }

  // Position of byte `off` of the chunk, on the same line as mark `m`.
  Position positionOnLine(const YAML::Mark& m, std::size_t off) const {
    std::size_t lineStart = static_cast<std::size_t>(m.pos - m.column);
    return {firstLine_ + m.line, 1 + countChars(chunk_.substr(lineStart, off - lineStart))};
  }

  // Position of byte `off`, counting lines back from mark `m` (off <= m.pos).
  Position positionBefore(const YAML::Mark& m, std::size_t off) const {
    int line = m.line;
    for (std::size_t i = off; i < static_cast<std::size_t>(m.pos); ++i) line -= chunk_[i] == '\n' ? 1 : 0;
    std::size_t ls = off == 0 ? npos : chunk_.rfind('\n', off - 1);
    ls = ls == npos ? 0 : ls + 1;
    return {firstLine_ + line, 1 + countChars(chunk_.substr(ls, off - ls))};
  }

  // Where the innermost flow collection still open was opened, if any.
  std::optional<Position> innermostOpenFlow() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (it->flow) return it->start;
    return std::nullopt;
  }

  // --- EventHandler ---

  void OnDocumentStart(const YAML::Mark& mark) override {
    doc_->start = position(mark);
    decodes_ = 1;  // go-yaml decodes the document node itself
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark&, const std::string& name) override { pendingAnchorName_ = name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    countDecode(mark);
    registerAnchor(anchor);
    Frame* f = top();
    const bool keyContext = f && f->kind == Frame::Kind::Map && f->expectKey;
    // yaml-cpp reports "~"/"null" and a missing node ("key:" + nothing)
    // alike; a missing node's mark is that of the next token.
    std::size_t wordLength = nullWordAt(mark);
    const bool written = wordLength > 0 && (keyContext || !keyColonFollows(static_cast<std::size_t>(mark.pos) + wordLength));
    if (written) checkTabs(mark);
    if (keyContext)
      fail(position(mark), "unsupported map key: null (JSON object keys are strings; kubectl fails with "
                           "\"Unsupported map key of type: <nil>\")");
    NodeOrigin origin;
    origin.plainScalar = true;
    if (written) {
      origin.position = position(mark);
      origin.writtenText.assign(chunk_.substr(static_cast<std::size_t>(mark.pos), wordLength));
    } else {
      origin.position = missingNodePosition(mark);
    }
    placeScalar(mark, json(), std::move(origin), anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    countDecode(mark);
    checkTabs(mark);
    registerAnchor(anchor);
    const bool plain = tag == "?";
    lastScalarMark_ = mark;
    lastScalarPos_ = mark.pos;
    lastScalarPlain_ = plain;
    Frame* f = top();
    if (f && f->kind == Frame::Kind::Map && f->expectKey) {
      if ((plain && value == "<<") || tag == kMergeTag) {
        setMergeKey(*f, position(mark));
        return;
      }
      std::string decoded;
      Resolved r = resolveTagged(tag, value, mark, decoded);
      std::string key = keyString(r, isBinary(tag) ? decoded : value, value, mark);
      if (anchor) {
        AnchorRecord& a = anchors_[anchor];
        a.value = toJson(r, value, decoded, tag);
        NodeOrigin o;
        o.position = position(mark);
        o.plainScalar = plain;
        if (plain) o.writtenText = value;
        a.entries.assign(1, RelEntry{"", std::move(o)});
        a.decodes = 1;
        a.depth = 0;
        a.done = true;
      }
      setKey(*f, std::move(key), position(mark));
      return;
    }
    std::string decoded;
    Resolved r = resolveTagged(tag, value, mark, decoded);
    json v = toJson(r, value, decoded, tag);
    if (r.kind == Kind::Float && !std::isfinite(r.d)) failNonFinite(mark, r.d, value);
    NodeOrigin origin;
    origin.position = position(mark);
    if (plain) {
      origin.plainScalar = true;
      origin.writtenText = value;
    }
    placeScalar(mark, std::move(v), std::move(origin), anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t id) override {
    countDecode(mark);
    checkTabs(mark);
    if (id >= anchors_.size() || !anchors_[id].done) {
      std::string name = id < anchors_.size() ? anchors_[id].name : std::string();
      fail(position(mark), "anchor '" + name + "' value contains itself");
    }
    const AnchorRecord& a = anchors_[id];
    if (decodes_ + a.decodes > lim_.maxNodes) failTooManyNodes(mark, true);
    decodes_ += a.decodes;
    aliasDecodes_ += a.decodes;
    checkAliasing(mark);

    Frame* f = top();
    if (f && f->kind == Frame::Kind::Map && f->expectKey) {
      setKey(*f, keyFromJson(a.value, mark), position(mark));
      return;
    }
    if (f && f->kind == Frame::Kind::Map && f->keyIsMerge) {
      if (!a.value.is_object()) failWantMap(mark);
      MergeSource src;
      src.anchor = id;
      src.depth = a.depth;
      applyMerge(*f, src);
      f->keyIsMerge = false;
      f->expectKey = true;
      return;
    }
    if (f && f->kind == Frame::Kind::Seq && f->role == Frame::Role::MergeSeq) {
      if (!a.value.is_object()) failWantMap(mark);
      MergeSource src;
      src.anchor = id;
      src.depth = a.depth;
      f->sources.push_back(std::move(src));
      return;
    }
    if (frames_.size() + a.depth > lim_.maxDepth) failTooDeep(mark);
    if (a.value.is_number_float() && !std::isfinite(a.value.get<double>()))
      failNonFinite(mark, a.value.get<double>(), a.entries.empty() ? std::string() : a.entries.front().origin.writtenText);
    NodeOrigin origin;
    origin.position = position(mark);
    if (!a.entries.empty() && a.entries.front().rel.empty()) {
      origin.plainScalar = a.entries.front().origin.plainScalar;
      origin.writtenText = a.entries.front().origin.writtenText;
    }
    placeNode(mark, json(a.value), std::move(origin));
    // Children: where the anchor wrote them, under the new pointer.
    for (const RelEntry& e : a.entries)
      if (!e.rel.empty()) log_.push_back(LogEntry{ptr_ + e.rel, e.origin, true});
    if (f) f->maxChildDepth = std::max(f->maxChildDepth, a.depth);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    openContainer(mark, Frame::Kind::Seq, anchor, style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { closeContainer(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    openContainer(mark, Frame::Kind::Map, anchor, style == YAML::EmitterStyle::Flow);
  }
  void OnMapEnd() override { closeContainer(); }

 private:
  [[noreturn]] void fail(Position at, std::string message) const { throw BuildError{at, std::move(message)}; }

  [[noreturn]] void failWantMap(const YAML::Mark& mark) const {
    fail(position(mark), "map merge requires map or sequence of maps as the value");
  }
  [[noreturn]] void failTooDeep(const YAML::Mark& mark) const {
    fail(position(mark), "maps and sequences nested deeper than the limit of " + std::to_string(lim_.maxDepth) + " levels");
  }
  [[noreturn]] void failTooManyNodes(const YAML::Mark& mark, bool alias) const {
    fail(position(mark), "document has more than " + std::to_string(lim_.maxNodes) + " nodes" +
                             (alias ? " once aliases are expanded (an alias bomb?)" : ""));
  }
  [[noreturn]] void failNonFinite(const YAML::Mark& mark, double d, const std::string& text) const {
    std::string go = std::isnan(d) ? "NaN" : (d > 0 ? "+Inf" : "-Inf");
    fail(position(mark), "cannot encode " + (text.empty() ? go : text) +
                             " as JSON (kubectl fails with \"json: unsupported value: " + go +
                             "\"); quote it if a string is meant");
  }

  Frame* top() { return frames_.empty() ? nullptr : &frames_.back(); }

  void countDecode(const YAML::Mark& mark) {
    if (++decodes_ > lim_.maxNodes) failTooManyNodes(mark, aliasDecodes_ > 0);
    if (aliasDecodes_ > 100) checkAliasing(mark);
  }

  // go-yaml decode.go: "document contains excessive aliasing".
  void checkAliasing(const YAML::Mark& mark) const {
    if (aliasDecodes_ > 100 && decodes_ > 1000 &&
        static_cast<double>(aliasDecodes_) / static_cast<double>(decodes_) > allowedAliasRatio(decodes_))
      fail(position(mark), "document contains excessive aliasing (kubectl's YAML decoder refuses it)");
  }

  void registerAnchor(YAML::anchor_t anchor) {
    if (!anchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = AnchorRecord{};
    anchors_[anchor].name = std::move(pendingAnchorName_);
    pendingAnchorName_.clear();
  }

  // Tabs: libyaml (hence go-yaml) only skips a tab as separation where a
  // simple key is not allowed, so in block context a tab at the start of a
  // line or right after "- ", "? " or ": " "cannot start any token".
  // yaml-cpp accepts some of these ("key:\tvalue"), so check node starts.
  void checkTabs(const YAML::Mark& mark) const {
    if (!frames_.empty() && frames_.back().flow) return;
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) > chunk_.size()) return;
    std::size_t p = static_cast<std::size_t>(mark.pos);
    std::size_t tab = npos;
    while (p > 0 && (chunk_[p - 1] == ' ' || chunk_[p - 1] == '\t')) {
      --p;
      if (chunk_[p] == '\t') tab = p;
    }
    if (tab == npos) return;
    char before = p > 0 ? chunk_[p - 1] : '\n';
    if (before == '\n' || before == '\r' || before == ':' || before == '-' || before == '?')
      fail(positionOnLine(mark, tab), before == '\n' || before == '\r'
                                          ? "found a tab character used for indentation (YAML allows only spaces)"
                                          : "found a tab character after '" + std::string(1, before) +
                                                "' that cannot start any token (use a space)");
  }

  // Length of "~"/"null"/"Null"/"NULL" written at the mark, else 0.
  std::size_t nullWordAt(const YAML::Mark& mark) const {
    if (mark.pos < 0) return 0;
    std::string_view rest = chunk_.substr(std::min(chunk_.size(), static_cast<std::size_t>(mark.pos)));
    std::size_t n = 0;
    if (!rest.empty() && rest[0] == '~') n = 1;
    else if (rest.size() >= 4 && (rest.compare(0, 4, "null") == 0 || rest.compare(0, 4, "Null") == 0 || rest.compare(0, 4, "NULL") == 0)) n = 4;
    if (n == 0) return 0;
    if (n < rest.size() && std::strchr(" \t\r\n,]}#", rest[n]) == nullptr) return 0;
    return n;
  }

  // Is the word ending at `p` a key ("null: x")? Then a null reported at its
  // position was a missing value that borrowed the next token's mark.
  bool keyColonFollows(std::size_t p) const {
    while (p < chunk_.size() && (chunk_[p] == ' ' || chunk_[p] == '\t')) ++p;
    return p < chunk_.size() && chunk_[p] == ':' &&
           (p + 1 >= chunk_.size() || std::strchr(" \t\r\n,[]{}", chunk_[p + 1]) != nullptr);
  }

  Position missingNodePosition(const YAML::Mark& mark) const {
    const Frame* f = frames_.empty() ? nullptr : &frames_.back();
    if (f && f->kind == Frame::Kind::Map && !f->expectKey) return f->keyPos;  // "key:" with no value
    if (f && f->kind == Frame::Kind::Seq && mark.pos >= 0) {                   // "-" with no value
      std::size_t p = std::min(chunk_.size(), static_cast<std::size_t>(mark.pos));
      while (p > 0 && std::strchr(" \t\r\n", chunk_[p - 1]) != nullptr) --p;
      if (p > 0 && chunk_[p - 1] == '-') return positionBefore(mark, p - 1);
    }
    return position(mark);
  }

  // Resolution with an explicit tag, like go-yaml's resolve(tag, in) +
  // scalar(). `decoded` receives a !!binary value's bytes.
  Resolved resolveTagged(const std::string& tag, const std::string& value, const YAML::Mark& mark, std::string& decoded) const {
    if (tag == "?") return resolvePlain(value);
    Resolved str;
    if (tag.size() <= kTagPrefix.size() || tag.compare(0, kTagPrefix.size(), kTagPrefix) != 0) return str;  // "!", "!custom"
    std::string_view name = std::string_view(tag).substr(kTagPrefix.size());
    if (name == "binary") {
      auto bytes = decodeBase64(value);
      if (!bytes) fail(position(mark), "!!binary value contains invalid base64 data");
      decoded = sanitizeUtf8(*bytes);
      return str;
    }
    Kind want;
    if (name == "int") want = Kind::Int;
    else if (name == "float") want = Kind::Float;
    else if (name == "bool") want = Kind::Bool;
    else if (name == "null") want = Kind::Null;
    else if (name == "timestamp") {
      if (looksLikeTimestamp(value)) return str;
      Resolved r = resolvePlain(value);
      fail(position(mark), "cannot decode " + std::string(kindTagName(r.kind)) + " `" + value + "` as a !!timestamp");
    } else {
      return str;  // !!str, !!map, !!seq, ... on a scalar: the text
    }
    Resolved r = resolvePlain(value);
    if (r.kind == want || (want == Kind::Int && r.kind == Kind::Uint)) return r;
    if (want == Kind::Float && r.kind == Kind::Int) return makeFloat(static_cast<double>(r.i));
    fail(position(mark), "cannot decode " + std::string(kindTagName(r.kind)) + " `" + value + "` as a !!" + std::string(name));
  }

  static bool isBinary(const std::string& tag) { return tag == "tag:yaml.org,2002:binary"; }

  static json toJson(const Resolved& r, const std::string& value, const std::string& decoded, const std::string& tag) {
    switch (r.kind) {
      case Kind::Null: return json();
      case Kind::Bool: return json(r.b);
      case Kind::Int: return json(r.i);
      case Kind::Uint: return json(r.u);
      case Kind::Float: return json(r.d);
      case Kind::String: break;
    }
    return json(isBinary(tag) ? decoded : value);
  }

  // sigs.k8s.io/yaml convertToJSONableObject: the JSON name of a map key.
  std::string keyString(const Resolved& r, const std::string& text, const std::string& written, const YAML::Mark& mark) const {
    switch (r.kind) {
      case Kind::String: return text;
      case Kind::Int: return std::to_string(r.i);
      case Kind::Bool: return r.b ? "true" : "false";
      case Kind::Float: return goFormatFloatKey(r.d);
      case Kind::Uint:
        fail(position(mark), "unsupported map key of type uint64: " + written +
                                 " (kubectl fails with \"Unsupported map key of type: uint64\"); quote it");
      case Kind::Null:
        fail(position(mark), "unsupported map key: null (JSON object keys are strings; kubectl fails with "
                             "\"Unsupported map key of type: <nil>\")");
    }
    return text;
  }

  std::string keyFromJson(const json& v, const YAML::Mark& mark) const {
    switch (v.type()) {
      case json::value_t::string: return v.get<std::string>();
      case json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
      case json::value_t::number_float: return goFormatFloatKey(v.get<double>());
      case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
      case json::value_t::number_unsigned:
        fail(position(mark), "unsupported map key of type uint64 (kubectl fails with \"Unsupported map key of type: uint64\")");
      case json::value_t::null:
        fail(position(mark), "unsupported map key: null (JSON object keys are strings; kubectl fails with "
                             "\"Unsupported map key of type: <nil>\")");
      default:
        fail(position(mark), "invalid map key: a " + std::string(v.is_object() ? "mapping" : "sequence") +
                                 " cannot be a key (kubectl fails with \"invalid map key\")");
    }
  }

  void setKey(Frame& f, std::string key, Position keyPos) {
    f.key = std::move(key);
    f.keyPos = keyPos;
    f.expectKey = false;
    f.keyIsMerge = false;
    ptr_.resize(f.ptrLen);
    ptr_ += '/';
    appendEscaped(ptr_, f.key);
  }

  void setMergeKey(Frame& f, Position keyPos) {
    f.keyPos = keyPos;
    f.expectKey = false;
    f.keyIsMerge = true;
    --decodes_;  // go-yaml never decodes the "<<" key itself
  }

  void addEntry(NodeOrigin&& origin) { log_.push_back(LogEntry{ptr_, std::move(origin), true}); }

  std::string pointerOf(const Frame& f) const { return ptr_.substr(0, f.ptrLen); }

  // Marks the entries of f's child `key` (and below) as gone.
  void killSubtree(const Frame& f, std::string_view key) {
    std::string prefix = pointerOf(f);
    prefix += '/';
    appendEscaped(prefix, key);
    for (std::size_t i = f.logStart; i < log_.size(); ++i) {
      LogEntry& e = log_[i];
      if (!e.live) continue;
      const std::string& p = e.pointer;
      if (p.size() >= prefix.size() && p.compare(0, prefix.size(), prefix) == 0 && (p.size() == prefix.size() || p[prefix.size()] == '/'))
        e.live = false;
    }
  }

  void reportDuplicate(const Frame& f, const std::string& key) {
    std::string pointer = pointerOf(f);
    pointer += '/';
    appendEscaped(pointer, key);
    int firstLine = 0;
    for (std::size_t i = log_.size(); i-- > f.logStart;)
      if (log_[i].live && log_[i].pointer == pointer) {
        firstLine = log_[i].origin.keyPosition.line;
        break;
      }
    std::string message = "mapping key \"" + key + "\" already defined" +
                          (firstLine > 0 ? " at line " + std::to_string(firstLine) : std::string()) +
                          (lim_.rejectDuplicateKeys ? "" : "; kubectl keeps the last value");
    if (lim_.rejectDuplicateKeys) fail(f.keyPos, std::move(message));
    doc_->warnings.push_back(ParseWarning{f.keyPos, std::move(message), std::move(pointer), ParseWarning::Kind::DuplicateKey});
  }

  json* mapSlot(Frame& f) {
    auto& obj = f.value->get_ref<json::object_t&>();
    auto [it, inserted] = obj.try_emplace(std::move(f.key));
    if (!inserted) {
      bool explicitBefore = !f.hadMerge || f.explicitKeys->count(it->first) > 0;
      if (explicitBefore) reportDuplicate(f, it->first);
      killSubtree(f, it->first);
      it->second = nullptr;
    }
    if (f.hadMerge) f.explicitKeys->insert(it->first);
    return &it->second;
  }

  // Puts a node into its parent (or the document root) and records its
  // origin under its pointer, which is left in ptr_.
  json* placeNode(const YAML::Mark& mark, json&& v, NodeOrigin&& origin) {
    Frame* f = top();
    if (!f) {
      doc_->value = std::move(v);
      ptr_.clear();
      addEntry(std::move(origin));
      return &doc_->value;
    }
    if (f->kind == Frame::Kind::Seq) {
      if (f->role == Frame::Role::MergeSeq) failWantMap(mark);
      auto& arr = f->value->get_ref<json::array_t&>();
      arr.push_back(std::move(v));
      ptr_.resize(f->ptrLen);
      ptr_ += '/';
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, f->index++);
      ptr_.append(buf, res.ptr);
      addEntry(std::move(origin));
      return &arr.back();
    }
    if (f->keyIsMerge) failWantMap(mark);
    json* slot = mapSlot(*f);
    *slot = std::move(v);
    origin.keyPosition = f->keyPos;
    addEntry(std::move(origin));
    f->expectKey = true;
    return slot;
  }

  void placeScalar(const YAML::Mark& mark, json&& v, NodeOrigin&& origin, YAML::anchor_t anchor) {
    json* slot = placeNode(mark, std::move(v), std::move(origin));
    if (anchor) recordAnchor(anchor, *slot, log_.size() - 1, ptr_, 1, 0);
  }

  void recordAnchor(YAML::anchor_t id, const json& value, std::size_t logStart, std::string_view prefix, std::uint64_t decodes,
                    std::size_t depth) {
    AnchorRecord& a = anchors_[id];
    a.value = value;
    a.entries.clear();
    for (std::size_t i = logStart; i < log_.size(); ++i)
      if (log_[i].live) a.entries.push_back(RelEntry{log_[i].pointer.substr(prefix.size()), log_[i].origin});
    a.decodes = decodes;
    a.depth = depth;
    a.done = true;
  }

  void openContainer(const YAML::Mark& mark, Frame::Kind kind, YAML::anchor_t anchor, bool flow) {
    countDecode(mark);
    checkTabs(mark);
    registerAnchor(anchor);
    Frame* parent = top();
    if (parent && parent->kind == Frame::Kind::Map && parent->expectKey)
      fail(position(mark), std::string("invalid map key: a ") + (kind == Frame::Kind::Map ? "mapping" : "sequence") +
                               " cannot be a key (kubectl fails with \"invalid map key\")");
    if (frames_.size() + 1 > lim_.maxDepth) failTooDeep(mark);
    Frame nf;
    nf.kind = kind;
    nf.flow = flow;
    nf.anchor = anchor;
    nf.decodesAtStart = decodes_ - 1;
    nf.logStart = log_.size();
    nf.start = position(mark);
    json empty = kind == Frame::Kind::Map ? json::object() : json::array();
    if (parent && parent->kind == Frame::Kind::Map && parent->keyIsMerge) {  // "<<: {...}" / "<<: [...]"
      if (kind == Frame::Kind::Map) {
        nf.role = Frame::Role::MergeMap;
        nf.owned = std::make_unique<json>(std::move(empty));
        nf.value = nf.owned.get();
      } else {
        nf.role = Frame::Role::MergeSeq;
        --decodes_;  // go-yaml walks this sequence's items without decoding the sequence
      }
      nf.ptrLen = parent->ptrLen;
    } else if (parent && parent->kind == Frame::Kind::Seq && parent->role == Frame::Role::MergeSeq) {
      if (kind != Frame::Kind::Map) failWantMap(mark);
      nf.role = Frame::Role::MergeItem;
      nf.owned = std::make_unique<json>(std::move(empty));
      nf.value = nf.owned.get();
      nf.ptrLen = parent->ptrLen;
    } else {
      NodeOrigin origin;
      origin.position = nf.start;
      nf.value = placeNode(mark, std::move(empty), std::move(origin));
      nf.ptrLen = ptr_.size();
    }
    frames_.push_back(std::move(nf));
  }

  // The entries of a merge source (relative to the target map), taken out of
  // the log: applyMerge() re-adds them in go-yaml's precedence order.
  std::vector<RelEntry> extractEntries(std::size_t logStart, std::size_t prefixLen) {
    std::vector<RelEntry> out;
    for (std::size_t i = logStart; i < log_.size(); ++i) {
      if (!log_[i].live) continue;
      log_[i].live = false;
      out.push_back(RelEntry{log_[i].pointer.substr(prefixLen), std::move(log_[i].origin)});
    }
    return out;
  }

  void closeContainer() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    const std::size_t depth = 1 + f.maxChildDepth;
    Frame* parent = top();
    switch (f.role) {
      case Frame::Role::Normal:
        if (f.anchor) recordAnchor(f.anchor, *f.value, f.logStart, pointerOf(f), decodes_ - f.decodesAtStart, depth);
        if (parent) parent->maxChildDepth = std::max(parent->maxChildDepth, depth);
        return;
      case Frame::Role::MergeMap:
      case Frame::Role::MergeItem: {
        MergeSource src;
        src.value = std::move(*f.owned);
        src.entries = extractEntries(f.logStart, f.ptrLen);
        src.depth = depth;
        if (f.anchor) {
          AnchorRecord& a = anchors_[f.anchor];
          a.value = src.value;
          a.entries = src.entries;
          a.decodes = decodes_ - f.decodesAtStart;
          a.depth = depth;
          a.done = true;
        }
        if (f.role == Frame::Role::MergeItem) {
          parent->sources.push_back(std::move(src));
        } else {
          applyMerge(*parent, src);
          parent->keyIsMerge = false;
          parent->expectKey = true;
        }
        return;
      }
      case Frame::Role::MergeSeq: {
        // Step backwards as go-yaml does: earlier maps take precedence.
        for (auto it = f.sources.rbegin(); it != f.sources.rend(); ++it) applyMerge(*parent, *it);
        if (f.anchor) {
          AnchorRecord& a = anchors_[f.anchor];
          a.value = json::array();
          for (const MergeSource& s : f.sources) a.value.push_back(s.anchor ? anchors_[s.anchor].value : s.value);
          NodeOrigin o;
          o.position = f.start;
          a.entries.assign(1, RelEntry{"", std::move(o)});
          a.decodes = decodes_ - f.decodesAtStart;
          a.depth = depth;
          a.done = true;
        }
        parent->keyIsMerge = false;
        parent->expectKey = true;
        return;
      }
    }
  }

  // go-yaml v2 merge: every key of the source is set in the target, replacing
  // what is there (keys written later in the target replace it again).
  void applyMerge(Frame& target, const MergeSource& src) {
    const json& sv = src.anchor ? anchors_[src.anchor].value : src.value;
    const std::vector<RelEntry>& se = src.anchor ? anchors_[src.anchor].entries : src.entries;
    auto& obj = target.value->get_ref<json::object_t&>();
    if (!target.hadMerge) {
      target.hadMerge = true;
      target.explicitKeys = std::make_unique<std::set<std::string, std::less<>>>();
      for (const auto& kv : obj) target.explicitKeys->insert(kv.first);
    }
    for (const auto& [k, v] : sv.get_ref<const json::object_t&>()) {
      auto [it, inserted] = obj.try_emplace(k, v);
      if (!inserted) {
        killSubtree(target, k);
        it->second = v;
      }
    }
    const std::string prefix = pointerOf(target);
    for (const RelEntry& e : se)
      if (!e.rel.empty()) log_.push_back(LogEntry{prefix + e.rel, e.origin, true});
    if (src.depth > 0) target.maxChildDepth = std::max(target.maxChildDepth, src.depth - 1);
  }

  // yaml-cpp accepts a quoted scalar that runs to the end of the input;
  // go-yaml: "found unexpected end of stream" while scanning it.
  void checkLastQuotedScalar() const {
    if (lastScalarPos_ < 0 || lastScalarPlain_) return;
    std::size_t p = static_cast<std::size_t>(lastScalarPos_);
    auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (p < chunk_.size() && (chunk_[p] == '!' || chunk_[p] == '&')) {
      while (p < chunk_.size() && !isSpace(chunk_[p])) ++p;
      while (p < chunk_.size() && isSpace(chunk_[p])) ++p;
    }
    if (p >= chunk_.size() || (chunk_[p] != '"' && chunk_[p] != '\'')) return;
    const char q = chunk_[p];
    for (++p; p < chunk_.size(); ++p) {
      if (q == '"' && chunk_[p] == '\\') {
        ++p;
      } else if (chunk_[p] == q) {
        if (q == '\'' && p + 1 < chunk_.size() && chunk_[p + 1] == '\'') ++p;
        else return;
      }
    }
    fail(position(lastScalarMark_), std::string("found unexpected end of stream while scanning a quoted scalar (missing closing ") +
                                        (q == '"' ? "\"" : "'") + ")");
  }

  const Limits& lim_;
  std::string_view chunk_;
  int firstLine_ = 1;
  bool ascii_ = true;
  Document* doc_ = nullptr;
  std::string ptr_;
  std::vector<Frame> frames_;
  std::vector<LogEntry> log_;
  std::vector<AnchorRecord> anchors_;
  std::string pendingAnchorName_;
  std::uint64_t decodes_ = 0, aliasDecodes_ = 0;
  YAML::Mark lastScalarMark_;
  long lastScalarPos_ = -1;
  bool lastScalarPlain_ = true;
};

// Swallows the events of a second document in a section (kubectl ignores it).
class DiscardHandler final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// An istream over memory, without copying it.
class MemoryBuffer final : public std::streambuf {
 public:
  MemoryBuffer(const char* begin, const char* end) {
    char* b = const_cast<char*>(begin);
    setg(b, b, const_cast<char*>(end));
  }
};

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// yaml-cpp's messages, reworded like libyaml/go-yaml where that helps.
std::string describeYamlCppError(const std::string& msg) {
  namespace E = YAML::ErrorMsg;
  if (msg == E::MAP_VALUE) return "mapping values are not allowed in this context (check indentation, or quote a value containing \": \")";
  if (msg == E::END_OF_MAP) return "did not find expected key (check indentation)";
  if (msg == E::END_OF_SEQ) return "did not find expected '-' indicator (check indentation)";
  if (msg == E::END_OF_MAP_FLOW) return "did not find expected ',' or '}' (unclosed flow mapping)";
  if (msg == E::END_OF_SEQ_FLOW) return "did not find expected ',' or ']' (unclosed flow sequence)";
  if (msg == E::BLOCK_ENTRY) return "block sequence entries are not allowed in this context (check indentation)";
  if (msg == E::TAB_IN_INDENTATION) return "found a tab character used for indentation (YAML allows only spaces)";
  if (msg == E::EOF_IN_SCALAR) return "found unexpected end of stream while scanning a quoted scalar";
  if (msg == E::DOC_IN_SCALAR) return "found a document marker inside a quoted scalar";
  if (msg == E::UNKNOWN_TOKEN) return "found character that cannot start any token";
  if (startsWith(msg, E::UNKNOWN_ANCHOR)) return "unknown anchor '" + msg.substr(std::strlen(E::UNKNOWN_ANCHOR)) + "' referenced";
  return msg;
}

// One section -> one Document (or an error).
std::optional<ParseError> parseSection(std::string_view text, const Section& sec, Builder& builder, Document& doc) {
  std::string_view chunk = text.substr(sec.begin, sec.end - sec.begin);
  MemoryBuffer buffer(chunk.data(), chunk.data() + chunk.size());
  std::istream in(&buffer);
  builder.begin(chunk, sec.firstLine, sec.ascii, &doc);
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) {  // only comments / blank lines
      doc.value = nullptr;
      doc.start = Position{sec.firstLine, 1};
      return std::nullopt;
    }
    builder.finish();
    try {
      DiscardHandler discard;
      if (parser.HandleNextDocument(discard))
        doc.warnings.push_back(ParseWarning{doc.start,
                                            "more than one YAML document in this '---' section (after '...'); kubectl reads "
                                            "only the first and ignores the rest",
                                            "", ParseWarning::Kind::IgnoredContent});
    } catch (const YAML::Exception&) {
      doc.warnings.push_back(ParseWarning{doc.start, "unparsable content after the end of this document is ignored by kubectl", "",
                                          ParseWarning::Kind::IgnoredContent});
    }
    return std::nullopt;
  } catch (const BuildError& e) {
    return ParseError{e.position, e.message};
  } catch (const YAML::DeepRecursion& e) {
    return ParseError{builder.position(e.mark), "maps and sequences nested deeper than the YAML parser's limit of 500 levels"};
  } catch (const YAML::Exception& e) {
    ParseError err{builder.position(e.mark), describeYamlCppError(e.msg)};
    // Name the [ or { that was not closed; if yaml-cpp only noticed at the
    // end of the section, point at that bracket rather than at the end.
    if (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
      if (auto open = builder.innermostOpenFlow()) {
        const bool seq = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
        err.message = std::string("did not find expected ',' or '") + (seq ? "]" : "}") + "' to continue or close the flow " +
                      (seq ? "sequence" : "mapping") + " opened at line " + std::to_string(open->line) + ", column " +
                      std::to_string(open->column);
        if (e.mark.pos < 0 || chunk.find_first_not_of(" \t\r\n", static_cast<std::size_t>(e.mark.pos)) == npos)
          err.position = *open;
      }
    }
    if (startsWith(e.msg, YAML::ErrorMsg::UNKNOWN_ANCHOR) && e.mark.pos >= 0 &&
        static_cast<std::size_t>(e.mark.pos) < chunk.size() && chunk[static_cast<std::size_t>(e.mark.pos)] == '*') {
      // yaml-cpp 0.7 does not say which anchor; the alias is at the mark.
      std::size_t b = static_cast<std::size_t>(e.mark.pos) + 1, n = b;
      while (n < chunk.size() && std::strchr(" \t\r\n,[]{}", chunk[n]) == nullptr) ++n;
      err.message = "unknown anchor '" + std::string(chunk.substr(b, n - b)) + "' referenced";
    }
    // "image: {name}/app:1" - a value that starts with '{' or '[' is a flow
    // collection, and yaml-cpp stops at the text after it. Say so: the
    // indentation is not the problem.
    if ((e.msg == YAML::ErrorMsg::END_OF_MAP || e.msg == YAML::ErrorMsg::END_OF_SEQ) && !e.mark.is_null() &&
        e.mark.pos > 0 && static_cast<std::size_t>(e.mark.pos) <= chunk.size()) {
      std::size_t before = static_cast<std::size_t>(e.mark.pos);
      while (before > 0 && chunk[before - 1] == ' ') --before;
      if (before > 0 && (chunk[before - 1] == '}' || chunk[before - 1] == ']'))
        err.message = std::string(e.msg == YAML::ErrorMsg::END_OF_MAP ? "did not find expected key" : "did not find expected '-' indicator") +
                      ": text follows a flow collection closed by '" + chunk[before - 1] +
                      "' on this line (a value that starts with '{' or '[' is a YAML flow collection; quote the whole value)";
    }
    // A tab in the indentation of the failing line is the likely culprit.
    if (!e.mark.is_null() && e.mark.pos >= e.mark.column && static_cast<std::size_t>(e.mark.pos) <= chunk.size()) {
      std::size_t ls = static_cast<std::size_t>(e.mark.pos - e.mark.column);
      for (std::size_t p = ls; p < chunk.size() && (chunk[p] == ' ' || chunk[p] == '\t'); ++p)
        if (chunk[p] == '\t') {
          err.position = builder.positionOnLine(e.mark, p);
          err.message = "found a tab character used for indentation (YAML allows only spaces)";
          break;
        }
    }
    return err;
  }
}

void noteError(ParseResult& result, ParseError error) {
  if (!result.error) result.error = error;
  result.errors.push_back(std::move(error));
}

}  // namespace

ParseResult parseStream(std::string_view text, const Limits& limits) {
  ParseResult result;
  try {
    if (text.size() > limits.maxDocumentBytes) {
      result.error = ParseError{{1, 1}, "input is larger than the limit of " + std::to_string(limits.maxDocumentBytes) + " bytes"};
      return result;
    }
    std::string converted;
    std::string_view src = text;
    if (src.size() >= 3 && src.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      src.remove_prefix(3);
    } else if (src.size() >= 2 && (src.compare(0, 2, "\xFF\xFE") == 0 || src.compare(0, 2, "\xFE\xFF") == 0)) {
      converted = utf16ToUtf8(src.substr(2), src[0] == '\xFE');
      src = converted;
    }
    if (looksLikeJsonStream(src)) return parseJsonStream(src, limits);
    const std::vector<Section> sections = splitSections(src, limits);
    Builder builder(limits);
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const Section& sec = sections[i];
      if (sec.error) {
        noteError(result, *sec.error);
        continue;
      }
      Document doc;
      doc.index = i;  // counts the sections that failed too: the stream's numbering
      if (auto err = parseSection(src, sec, builder, doc)) {
        noteError(result, std::move(*err));
        continue;
      }
      result.documents.push_back(std::move(doc));
    }
  } catch (const std::bad_alloc&) {
    noteError(result, ParseError{{}, "out of memory while parsing YAML"});
  } catch (const std::exception& e) {
    noteError(result, ParseError{{}, std::string("internal error while parsing YAML: ") + e.what()});
  }
  return result;
}

}  // namespace gpuguard::yaml
