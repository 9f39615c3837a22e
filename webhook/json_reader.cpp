#include "webhook/json_reader.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "text/utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

// Thrown inside the reader only; readJson turns it into a JsonReadError.
struct Stop {
  std::size_t byte;
  bool tooDeep;
  std::string reason;
  bool tooMany = false;
};

std::string hexByte(unsigned char c) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 0xF];
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The first byte in [p, end) that ends a run of plain string bytes: '"', '\\',
// a control character or a non-ASCII byte (which needs UTF-8 validation).
// Sixteen bytes at a time with SSE2, then eight at a time: a byte is flagged
// by its high bit, by the "has a zero byte" trick for '"' and '\\', and by the
// "has a byte below n" trick for controls. Each trick can only misfire above
// a true hit, so the lowest flagged byte is always a real one.
const char* endOfPlainRun(const char* p, const char* end) {
#ifdef __SSE2__
  // Sixteen at a time where SSE2 is (every x86-64): one signed compare with
  // 0x20 flags the controls and, as negative bytes, every non-ASCII one.
  const __m128i quotes = _mm_set1_epi8('"');
  const __m128i backslashes = _mm_set1_epi8('\\');
  const __m128i spaces = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quotes), _mm_cmpeq_epi8(v, backslashes)), _mm_cmplt_epi8(v, spaces));
    if (const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits))) return p + std::countr_zero(mask);
    p += 16;
  }
#endif
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      const std::uint64_t quote = w ^ (kOnes * '"');
      const std::uint64_t backslash = w ^ (kOnes * '\\');
      const std::uint64_t flagged =
          (w | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) | ((w - kOnes * 0x20) & ~w)) & kHighs;
      if (flagged) return p + (std::countr_zero(flagged) >> 3);
      p += 8;
    }
  }
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
  }
  return end;
}

class Reader {
 public:
  Reader(std::string_view text, const JsonReadOptions& options)
      : text_(text), p_(text.data()), end_(text.data() + text.size()), options_(options) {
    read_.reserve(64);
  }

  void readDocument(json& out) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") p_ += 3;  // nlohmann skips a UTF-8 BOM
    skipWhitespace();
    readValue(&out, options_.filter ? options_.rootContext : kKeepAll, 0);
    skipWhitespace();
    // nlohmann's lexer takes a NUL byte where a token should start for the end
    // of input (for C strings), so text after "{...}\0" is ignored. Kept
    // for exact equivalence (found by fuzz_json_reader); anywhere else a NUL
    // outside a string is an error in both.
    if (p_ != end_ && *p_ == '\0') return;
    if (p_ != end_) fail(p_, "unexpected " + describe(p_) + " after the JSON value");
  }

 private:
  // ---- values. `out` is where the value goes, or nullptr to check and drop
  // it; `depth` is the number of arrays and objects open around it.

  void readValue(json* out, JsonContext context, std::size_t depth) {
    if (p_ == end_) fail(p_, "unexpected end of input; expected a value");
    if (out && ++kept_ > options_.maxValues) {
      throw Stop{offset(p_), false,
                 "more than " + std::to_string(options_.maxValues) + " JSON values to keep (the webhook's memory bound)",
                 true};
    }
    switch (*p_) {
      case '{': return readObject(out, context, depth + 1);
      case '[': return readArray(out, depth + 1);
      case '"': {
        const std::string_view s = readString(out != nullptr);
        if (out) assignString(*out, s);
        return;
      }
      case 't': return readLiteral("true", out, true);
      case 'f': return readLiteral("false", out, false);
      case 'n': return readLiteral("null", out, nullptr);
      case '-':
      case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9':
        return readNumber(out);
      default:
        fail(p_, "unexpected " + describe(p_) + "; expected a value");
    }
  }

  void readObject(json* out, JsonContext context, std::size_t depth) {
    checkDepth(depth);
    ++p_;  // '{'
    json::object_t* object = nullptr;
    if (out) {
      if (!out->is_object()) *out = json::object();
      object = out->get_ptr<json::object_t*>();
    }
    const std::size_t firstRead = read_.size();  // read_[firstRead, ...): this object's members read
    skipWhitespace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      if (object) object->clear();
      return;
    }
    for (;;) {
      if (p_ == end_ || *p_ != '"') fail(p_, "expected a string as object key, found " + describe(p_));
      const std::string_view key = readString(object != nullptr);
      skipWhitespace();
      if (p_ == end_ || *p_ != ':') fail(p_, "expected ':' after an object key, found " + describe(p_));
      ++p_;
      skipWhitespace();
      json* slot = nullptr;
      JsonContext child = kKeepAll;
      if (object) {
        if (context != kKeepAll) child = options_.filter(context, key);
        if (child != kDropMember) slot = &memberSlot(*object, key);
      }
      readValue(slot, child, depth);
      skipWhitespace();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skipWhitespace();
        continue;
      }
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        if (object) dropMembersNotRead(*object, firstRead);
        return;
      }
      fail(p_, "expected ',' or '}' after an object member, found " + describe(p_));
    }
  }

  void readArray(json* out, std::size_t depth) {
    checkDepth(depth);
    ++p_;  // '['
    json::array_t* array = nullptr;
    std::size_t count = 0;  // elements read; those of `out` past them are freed at the end
    if (out) {
      if (!out->is_array()) *out = json::array();
      array = out->get_ptr<json::array_t*>();
    }
    skipWhitespace();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      if (array) array->clear();
      return;
    }
    for (;;) {
      json* slot = nullptr;
      if (array) slot = count < array->size() ? &(*array)[count] : &array->emplace_back();
      ++count;
      readValue(slot, kKeepAll, depth);
      skipWhitespace();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skipWhitespace();
        continue;
      }
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        if (array) array->erase(array->begin() + static_cast<std::ptrdiff_t>(count), array->end());
        return;
      }
      fail(p_, "expected ',' or ']' after an array element, found " + describe(p_));
    }
  }

  // The slot of member `key` in `object`, which is being read anew over what
  // it held: a member of the same name is read into in place (its maps,
  // vectors and strings reused), a new name gets a new member. Either is
  // noted in read_; a duplicate key finds the member read before, and the
  // last value wins, as in nlohmann.
  json& memberSlot(json::object_t& object, std::string_view key) {
    auto member = object.find(key);
    if (member == object.end()) member = object.emplace(std::string(key), nullptr).first;
    read_.push_back(&*member);
    return member->second;
  }

  // Erases the members of `object` the text did not name (what the tree held
  // from an earlier document), then forgets the reads of this object. Their
  // count equals the object's size exactly when every member was read once.
  void dropMembersNotRead(json::object_t& object, std::size_t firstRead) {
    const auto first = read_.begin() + static_cast<std::ptrdiff_t>(firstRead);
    const std::less<const json::object_t::value_type*> byAddress;
    std::sort(first, read_.end(), byAddress);
    const auto distinctEnd = std::unique(first, read_.end());
    if (static_cast<std::size_t>(distinctEnd - first) != object.size()) {
      for (auto it = object.begin(); it != object.end();) {
        it = std::binary_search(first, distinctEnd, &*it, byAddress) ? std::next(it) : object.erase(it);
      }
    }
    read_.resize(firstRead);
  }

  // A string value, into the string `out` may already hold (its buffer reused).
  static void assignString(json& out, std::string_view s) {
    if (out.is_string()) {
      out.get_ref<std::string&>().assign(s);
    } else {
      out = std::string(s);
    }
  }

  template <class V>
  void readLiteral(std::string_view word, json* out, V value) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
      fail(p_, "invalid literal; expected true, false or null");
    }
    p_ += word.size();
    if (out) *out = value;
  }

  // RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. Typed
  // as nlohmann types it: without fraction and exponent an unsigned (or, with
  // '-', a signed) 64-bit integer if it fits, otherwise a double; a double
  // that overflows is an error ("number overflow"), one that underflows is 0.
  void readNumber(json* out) {
    const char* start = p_;
    if (*p_ == '-') ++p_;
    if (p_ == end_ || !isDigit(*p_)) fail(p_, "invalid number; expected a digit, found " + describe(p_));
    if (*p_ == '0') {
      ++p_;
    } else {
      skipDigits();
    }
    bool integral = true;
    if (p_ != end_ && *p_ == '.') {
      integral = false;
      ++p_;
      if (p_ == end_ || !isDigit(*p_)) fail(p_, "invalid number; expected a digit after '.', found " + describe(p_));
      skipDigits();
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integral = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !isDigit(*p_)) fail(p_, "invalid number; expected a digit in the exponent, found " + describe(p_));
      skipDigits();
    }
    if (integral && storeInteger(start, out)) return;
    double value = 0;
    if (std::from_chars(start, p_, value).ec != std::errc()) {
      // Out of range: strtod tells an overflow (inf) from an underflow (0).
      value = std::strtod(std::string(start, p_).c_str(), nullptr);
    }
    if (!std::isfinite(value)) fail(start, "number overflow parsing '" + std::string(start, p_) + "'");
    if (out) *out = value;
  }

  // False if [start, p_) does not fit its 64-bit integer type.
  bool storeInteger(const char* start, json* out) {
    if (*start == '-') {
      std::int64_t v = 0;
      if (std::from_chars(start, p_, v).ec != std::errc()) return false;
      if (out) *out = v;
    } else {
      std::uint64_t v = 0;
      if (std::from_chars(start, p_, v).ec != std::errc()) return false;
      if (out) *out = v;
    }
    return true;
  }

  void skipDigits() {
    while (p_ != end_ && isDigit(*p_)) ++p_;
  }

  // ---- strings

  // Reads the string literal at p_ (its opening quote). With `keep`, returns
  // its decoded content: a view of the text when it holds no escapes, else of
  // scratch_ (valid until the next string is read). Without, only checks it.
  std::string_view readString(bool keep) {
    const char* open = p_;
    const char* start = ++p_;
    const char* run = start;  // first byte not yet copied to scratch_
    bool decoded = false;
    for (;;) {
      p_ = endOfPlainRun(p_, end_);
      if (p_ == end_) fail(open, "invalid string: missing closing quote");
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        std::string_view content(start, static_cast<std::size_t>(p_ - start));
        if (decoded && keep) {
          scratch_.append(run, p_);
          content = scratch_;
        }
        ++p_;
        return content;
      }
      if (c == '\\') {
        if (keep) {
          if (!decoded) scratch_.clear();
          scratch_.append(run, p_);
        }
        decoded = true;
        readEscape(keep);
        run = p_;
      } else if (c < 0x20) {
        fail(p_, "invalid string: control character " + hexByte(c) + " must be escaped");
      } else {
        const utf8::Decoded u = utf8::decode(text_, offset(p_));
        if (u.error != utf8::Error::None) fail(p_, "invalid string: ill-formed UTF-8 byte " + hexByte(c));
        p_ += u.length;
      }
    }
  }

  // The escape at p_ (its backslash); appends what it stands for to scratch_.
  void readEscape(bool keep) {
    const char* backslash = p_;
    if (end_ - p_ < 2) fail(p_, "invalid string: missing closing quote");
    const char e = p_[1];
    p_ += 2;
    char plain;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': {
        const char32_t cp = readUnicodeEscape(backslash);
        if (keep) utf8::append(scratch_, cp);
        return;
      }
      default:
        fail(backslash, "invalid string: forbidden character after backslash");
    }
    if (keep) scratch_ += plain;
  }

  // After "\u": four hex digits, and for a high surrogate a second "\uXXXX"
  // holding the low one. Lone surrogates are errors, as in nlohmann.
  char32_t readUnicodeEscape(const char* backslash) {
    const char32_t unit = readHex4(backslash);
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      fail(backslash, "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
    }
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
      fail(backslash, "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
    }
    const char* second = p_;
    p_ += 2;
    const char32_t low = readHex4(second);
    if (low < 0xDC00 || low > 0xDFFF) {
      fail(backslash, "invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
    }
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  char32_t readHex4(const char* backslash) {
    char32_t value = 0;
    for (int k = 0; k < 4; ++k, ++p_) {
      const int digit = p_ == end_ ? -1 : hexValue(*p_);
      if (digit < 0) fail(backslash, "invalid string: '\\u' must be followed by 4 hex digits");
      value = (value << 4) | static_cast<char32_t>(digit);
    }
    return value;
  }

  // ---- helpers

  void skipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  void checkDepth(std::size_t depth) {
    if (depth > options_.maxDepth) {
      throw Stop{offset(p_), true, "JSON nesting deeper than " + std::to_string(options_.maxDepth) + " levels"};
    }
  }

  std::size_t offset(const char* at) const { return static_cast<std::size_t>(at - text_.data()); }

  std::string describe(const char* at) const {
    if (at == end_) return "end of input";
    const auto c = static_cast<unsigned char>(*at);
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    return "byte " + hexByte(c);
  }

  [[noreturn]] void fail(const char* at, std::string reason) const {
    throw Stop{offset(at), false, std::move(reason)};
  }

  std::string_view text_;
  const char* p_;
  const char* end_;
  const JsonReadOptions& options_;
  std::size_t kept_ = 0;  // values built into the tree (dropped ones are not)
  std::string scratch_;  // decoded strings that held escapes
  // The members read so far of each object open (its own run, innermost last).
  std::vector<const json::object_t::value_type*> read_;
};

// "line 3, column 7" of a byte offset (columns count bytes, from 1).
std::string lineAndColumn(std::string_view text, std::size_t byte) {
  const std::string_view before = text.substr(0, byte);
  const std::size_t lastNewline = before.rfind('\n');
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t column = lastNewline == std::string_view::npos ? byte + 1 : byte - lastNewline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

void releaseBelow(json& node, std::size_t depth) {
  if (depth >= kReleaseDepth) return;  // the rest goes through nlohmann's destructor
  if (node.is_object()) {
    auto& members = node.get_ref<json::object_t&>();
    for (auto& member : members) {
      if (member.second.is_structured()) releaseBelow(member.second, depth + 1);
    }
    members.clear();
  } else if (node.is_array()) {
    auto& items = node.get_ref<json::array_t&>();
    for (json& item : items) {
      if (item.is_structured()) releaseBelow(item, depth + 1);
    }
    items.clear();
  }
}

}  // namespace

void releaseJson(json& value) { releaseBelow(value, 0); }

bool readJson(std::string_view text, nlohmann::json& out, JsonReadError& error, const JsonReadOptions& options) {
  try {
    Reader(text, options).readDocument(out);
    return true;
  } catch (Stop& stop) {
    error.byte = stop.byte;
    error.tooDeep = stop.tooDeep;
    error.tooMany = stop.tooMany;
    error.message = stop.tooDeep || stop.tooMany ? std::move(stop.reason)
                                 : "parse error at byte " + std::to_string(stop.byte) + " (" +
                                       lineAndColumn(text, stop.byte) + "): " + stop.reason;
    return false;
  }
}

}  // namespace gpuguard::webhook
