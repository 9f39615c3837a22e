// kubectl's JSON path (see json_stream.h): a small recursive-descent JSON
// parser with Go encoding/json's grammar and messages, that also records
// where every node came from (the linter's SourceMap).
#include "yaml/json_stream.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rules/k8s/json_pointer.h"
#include "text/utf8.h"

namespace gpuguard::yaml {
namespace {

using json = nlohmann::json;

// YAMLOrJSONDecoder turns to YAML when a JSON value fails with at most this
// many before it ("if we found more than 1 JSON object, then this is an
// unambiguous JSON stream").
constexpr std::size_t kJsonValuesBeforeJsonOnly = 1;

// apimachinery's GuessJSONStream peeks this many bytes (kubectl's
// StreamVisitor passes 4096).
constexpr std::size_t kSniffBytes = 4096;

bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool isContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

constexpr char32_t kReplacement = 0xFFFD;

// How Go's encoding/json quotes an unexpected byte in its messages.
std::string quoteChar(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  static const char* const hex = "0123456789abcdef";
  if (c < 0x20 || c == 0x7F) {
    switch (c) {
      case '\t': return "'\\t'";
      case '\n': return "'\\n'";
      case '\r': return "'\\r'";
      default: return std::string("'\\x") + hex[c >> 4] + hex[c & 15] + "'";
    }
  }
  const std::size_t len = utf8::decode(s, i).length;
  if (len == 0) return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
  return "'" + std::string(s.substr(i, len)) + "'";
}

struct Failure {
  std::size_t offset;
  std::string message;
  // Not JSON's grammar but a value kubectl's decoder takes and refuses later
  // (a number beyond float64), or one of Limits: reading it as YAML would not help.
  bool syntax = true;
};

struct LogEntry {
  std::string pointer;
  NodeOrigin origin;
  bool live = true;
};

// Where each key of one object put its value's entries in the log, so a
// duplicate can retire them in O(size of the old value).
struct KeyRecord {
  std::size_t logBegin = 0, logEnd = 0;
  int line = 0;
};

class JsonStreamParser {
 public:
  JsonStreamParser(std::string_view text, const Limits& limits, ListItemSink* items, JsonFallback* fallback)
      : s_(text), lim_(limits), items_(items), fallback_(fallback) {}

  ParseResult run(const DocumentSink& sink) {
    ParseResult result;
    try {
      skipSpace();
      for (std::size_t index = 0; pos_ < s_.size(); ++index) {
        Document doc;
        doc.index = index;
        parseListOrDocument(doc);
        if (sink) sink(doc);
        else result.documents.push_back(std::move(doc));
        ++documentsDone_;
        afterLast_ = pos_;
        skipSpace();
      }
    } catch (const Failure& f) {
      if (handedOver_ > 0) items_->discard();
      if (fallback_ && f.syntax && documentsDone_ <= kJsonValuesBeforeJsonOnly) {
        *fallback_ = JsonFallback{true, yamlStart(), documentsDone_, ParseError{positionAt(f.offset), f.message}};
        return result;
      }
      result.error = ParseError{positionAt(f.offset), f.message};
      result.errors.push_back(*result.error);
    }
    return result;
  }

 private:
  // apimachinery's YAMLOrJSONDecoder after a JSON syntax error: rewinds to
  // the end of the last value and eats white space up to and including the
  // first line break (consumeWhitespace).
  std::size_t yamlStart() const {
    std::size_t at = documentsDone_ > 0 ? afterLast_ : 0;
    for (; at < s_.size() && (isJsonSpace(s_[at]) || s_[at] == '\v' || s_[at] == '\f'); ++at)
      if (s_[at] == '\n') return at + 1;
    return at;
  }

  // Where the reading stands: what parsing a document again starts from.
  struct Cursor {
    std::size_t pos, lineStart, colOffset;
    int line, column;
  };
  Cursor cursor() const { return {pos_, lineStart_, colOffset_, line_, column_}; }
  void restore(const Cursor& c) {
    pos_ = c.pos, lineStart_ = c.lineStart, colOffset_ = c.colOffset, line_ = c.line, column_ = c.column;
  }

  // parseDocument(), handing a List's items to items_ as they are parsed
  // (ListItemSink); a document whose items were handed over but that is no
  // List after all is parsed again, whole.
  void parseListOrDocument(Document& doc) {
    const Cursor start = cursor();
    handingOver_ = items_ != nullptr;
    handedOver_ = 0;
    itemArrays_ = 0;
    parseDocument(doc);
    handingOver_ = false;
    if (handedOver_ == 0) return;
    if (itemArrays_ == 1 && isList(doc.value)) {
      doc.itemsHandedOver = true;
      return;
    }
    items_->discard();
    handedOver_ = 0;
    restore(start);
    const std::size_t index = doc.index;
    doc = Document{};
    doc.index = index;
    parseDocument(doc);
  }

  static bool isList(const json& value) {
    if (!value.is_object()) return false;
    const auto kind = value.find("kind");
    const auto items = value.find("items");
    return kind != value.end() && kind->is_string() && kind->get_ref<const std::string&>() == "List" &&
           items != value.end() && items->is_array();
  }

  // The element just parsed at the end of the root object's "items" array
  // (its first log entry at `logStart`, its warnings from `warningStart`),
  // to items_ as a Document of its own.
  void handOverItem(json::array_t& array, std::size_t logStart, std::size_t warningStart) {
    const std::size_t position = array.size() - 1;
    const std::size_t prefix = std::string_view("/items/").size() + std::to_string(position).size();
    Document item;
    item.index = doc_->index;
    item.value = std::move(array.back());
    array.back() = nullptr;
    std::vector<SourceMap::Entry> entries;
    for (std::size_t i = logStart; i < log_.size(); ++i) {
      if (log_[i].live) entries.push_back(SourceMap::Entry{log_[i].pointer.substr(prefix), std::move(log_[i].origin)});
    }
    log_.resize(logStart);
    item.sources = SourceMap::fromEntries(std::move(entries));
    item.start = item.sources.locate("");
    auto& warnings = doc_->warnings;
    for (std::size_t w = warningStart; w < warnings.size(); ++w) {
      item.warnings.push_back(std::move(warnings[w]));
      item.warnings.back().pointer.erase(0, prefix);
    }
    warnings.resize(warningStart);
    ++handedOver_;
    items_->item(position, item);
  }

  // --- positions (requested in increasing order, so counting is linear) ---

  Position positionAt(std::size_t off) {
    off = std::min(off, s_.size());
    if (off < colOffset_) colOffset_ = lineStart_, column_ = 1;
    for (; colOffset_ < off; ++colOffset_) column_ += isContinuation(static_cast<unsigned char>(s_[colOffset_])) ? 0 : 1;
    return {line_, column_};
  }

  void skipSpace() {
    while (pos_ < s_.size() && isJsonSpace(s_[pos_])) {
      if (s_[pos_] == '\n') {
        ++line_;
        lineStart_ = colOffset_ = pos_ + 1;
        column_ = 1;
      }
      ++pos_;
    }
  }

  [[noreturn]] void fail(std::size_t off, std::string message) { throw Failure{off, std::move(message)}; }
  [[noreturn]] void failNotSyntax(std::size_t off, std::string message) { throw Failure{off, std::move(message), false}; }

  [[noreturn]] void failUnexpected(std::string_view context) {
    if (pos_ >= s_.size()) fail(pos_, "unexpected end of JSON input");
    std::string message = "invalid character " + quoteChar(s_, pos_) + " " + std::string(context);
    // YAML written after two JSON values (a flow mapping, a comment, a
    // quote, a bare word): say why JSON rules apply.
    const char c = s_[pos_];
    if (documentsDone_ > kJsonValuesBeforeJsonOnly && (c == '#' || c == '\'' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      message += "; the stream starts with two JSON objects, so kubectl reads the rest as JSON too, not YAML";
    fail(pos_, std::move(message));
  }

  // --- documents and values ---

  void parseDocument(Document& doc) {
    doc_ = &doc;
    ptr_.clear();
    log_.clear();
    nodes_ = 0;
    doc.start = positionAt(pos_);
    parseValue(doc.value, Position{}, 0);
    std::vector<SourceMap::Entry> entries;
    for (LogEntry& e : log_)
      if (e.live) entries.push_back(SourceMap::Entry{std::move(e.pointer), std::move(e.origin)});
    doc.sources = SourceMap::fromEntries(std::move(entries));
    log_.clear();
  }

  void parseValue(json& slot, Position keyPosition, std::size_t depth) {
    skipSpace();
    if (pos_ >= s_.size()) fail(pos_, "unexpected end of JSON input");
    if (++nodes_ > lim_.maxNodes)
      failNotSyntax(pos_, "document has more than " + std::to_string(lim_.maxNodes) + " nodes");
    const std::size_t entry = log_.size();
    log_.push_back(LogEntry{ptr_, NodeOrigin{positionAt(pos_), keyPosition, "", false}});
    const char c = s_[pos_];
    if (c == '{') return parseObject(slot, depth + 1);
    if (c == '[') return parseArray(slot, depth + 1);
    if (c == '"') {
      slot = parseString();
      return;
    }
    const std::size_t start = pos_;
    if (c == 't' || c == 'f' || c == 'n') {
      slot = parseLiteral();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      slot = parseNumber();
    } else {
      failUnexpected("looking for beginning of value");
    }
    // Numbers and literals are what YAML calls plain scalars: the engine
    // may ask how they were written.
    log_[entry].origin.plainScalar = true;
    log_[entry].origin.writtenText = std::string(s_.substr(start, pos_ - start));
  }

  void checkDepth(std::size_t depth) {
    if (depth > lim_.maxDepth)
      failNotSyntax(pos_, "objects and arrays nested deeper than the limit of " + std::to_string(lim_.maxDepth) + " levels");
  }

  void parseObject(json& slot, std::size_t depth) {
    checkDepth(depth);
    ++pos_;  // '{'
    slot = json::object();
    auto& object = slot.get_ref<json::object_t&>();
    std::unordered_map<std::string, KeyRecord> keys;
    const std::size_t ptrLen = ptr_.size();
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return;
    }
    while (true) {
      skipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') failUnexpected("looking for beginning of object key string");
      const Position keyPosition = positionAt(pos_);
      std::string key = parseString();
      skipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') failUnexpected("after object key");
      ++pos_;
      ptr_.resize(ptrLen);
      ptr_ += '/';
      ptr_ += escapeJsonPointerToken(key);
      auto [it, inserted] = object.try_emplace(key);
      if (!inserted) retireDuplicate(keys[key], key, keyPosition);
      KeyRecord& record = keys[key];
      record.logBegin = log_.size();
      parseValue(it->second, keyPosition, depth);
      record.logEnd = log_.size();
      record.line = keyPosition.line;
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        break;
      }
      failUnexpected("after object key:value pair");
    }
    ptr_.resize(ptrLen);
  }

  // Go's maps keep the last value of a duplicated key; say so, and forget
  // where the first value was.
  void retireDuplicate(const KeyRecord& first, const std::string& key, Position keyPosition) {
    for (std::size_t i = first.logBegin; i < first.logEnd; ++i) log_[i].live = false;
    doc_->warnings.push_back(ParseWarning{keyPosition,
                                          "mapping key \"" + key + "\" already defined at line " +
                                              std::to_string(first.line) + "; kubectl keeps the last value",
                                          ptr_, ParseWarning::Kind::DuplicateKey});
  }

  void parseArray(json& slot, std::size_t depth) {
    checkDepth(depth);
    ++pos_;  // '['
    slot = json::array();
    auto& array = slot.get_ref<json::array_t&>();
    const std::size_t ptrLen = ptr_.size();
    // The root object's "items": its elements go to items_ one by one.
    const bool handOver = handingOver_ && depth == 2 && ptr_ == "/items";
    itemArrays_ += handOver ? 1 : 0;
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return;
    }
    while (true) {
      ptr_.resize(ptrLen);
      ptr_ += '/';
      ptr_ += std::to_string(array.size());
      array.emplace_back();
      const std::size_t logStart = log_.size(), warningStart = doc_->warnings.size();
      parseValue(array.back(), Position{}, depth);
      if (handOver) handOverItem(array, logStart, warningStart);
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        break;
      }
      failUnexpected("after array element");
    }
    ptr_.resize(ptrLen);
  }

  json parseLiteral() {
    for (std::string_view word : {"true", "false", "null"}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return word == "null" ? json(nullptr) : json(word == "true");
      }
    }
    // Name the first byte that breaks the literal, as Go does.
    const std::string_view word = s_[pos_] == 't' ? "true" : s_[pos_] == 'f' ? "false" : "null";
    std::size_t k = 0;
    while (pos_ + k < s_.size() && k < word.size() && s_[pos_ + k] == word[k]) ++k;
    pos_ += k;
    failUnexpected(std::string("in literal ") + std::string(word) + " (expecting '" + word[k] + "')");
  }

  bool digitAt(std::size_t i) const { return i < s_.size() && s_[i] >= '0' && s_[i] <= '9'; }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?, then int64 when it
  // fits, else float64 (apimachinery's ConvertMapNumbers).
  json parseNumber() {
    const std::size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    if (!digitAt(pos_)) failUnexpected("in numeric literal");
    if (s_[pos_] == '0') ++pos_;
    else while (digitAt(pos_)) ++pos_;
    bool integer = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      integer = false;
      ++pos_;
      if (!digitAt(pos_)) failUnexpected("after decimal point in numeric literal");
      while (digitAt(pos_)) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digitAt(pos_)) failUnexpected("in exponent of numeric literal");
      while (digitAt(pos_)) ++pos_;
    }
    const std::string_view text = s_.substr(start, pos_ - start);
    if (integer) {
      std::int64_t i = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      if (ec == std::errc() && end == text.data() + text.size()) return json(i);
    }
    const std::string copy(text);
    errno = 0;
    const double d = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(d))
      failNotSyntax(start, "number " + copy + " is out of range (kubectl: strconv.ParseFloat: value out of range)");
    return json(d);
  }

  std::uint32_t hex4(std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      pos_ = at + k;
      if (pos_ >= s_.size()) fail(pos_, "unexpected end of JSON input");
      const char c = s_[pos_];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) failUnexpected("in \\u hexadecimal character escape");
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    pos_ = at + 4;
    return v;
  }

  std::string parseString() {
    const std::size_t start = pos_;
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail(pos_, "unexpected end of JSON input (unterminated string)");
      if (pos_ - start > lim_.maxScalarBytes)
        failNotSyntax(start, "string is larger than the limit of " + std::to_string(lim_.maxScalarBytes) + " bytes");
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) failUnexpected("in string literal");
      if (c == '\\') {
        appendEscape(out);
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      const std::size_t len = utf8::decode(s_, pos_).length;
      if (len == 0) {
        utf8::append(out, kReplacement);  // Go replaces each invalid byte
        ++pos_;
      } else {
        out.append(s_.substr(pos_, len));
        pos_ += len;
      }
    }
  }

  void appendEscape(std::string& out) {
    ++pos_;  // '\\'
    if (pos_ >= s_.size()) fail(pos_, "unexpected end of JSON input (unterminated string)");
    const char e = s_[pos_];
    switch (e) {
      case '"': case '\\': case '/': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        std::uint32_t cp = hex4(pos_ + 1);
        if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
          const std::size_t save = pos_;
          const std::uint32_t low = hex4(pos_ + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            pos_ = save;  // not a pair: the second escape stands alone
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = kReplacement;
        utf8::append(out, cp);
        return;
      }
      default: failUnexpected("in string escape code");
    }
    ++pos_;
  }

  std::string_view s_;
  const Limits& lim_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::size_t lineStart_ = 0;
  std::size_t colOffset_ = 0;
  int column_ = 1;
  std::size_t nodes_ = 0;
  std::string ptr_;
  std::vector<LogEntry> log_;
  Document* doc_ = nullptr;
  ListItemSink* items_ = nullptr;
  JsonFallback* fallback_ = nullptr;
  std::size_t documentsDone_ = 0;  // values read whole
  std::size_t afterLast_ = 0;      // where the last of them ended
  bool handingOver_ = false;     // this document's List items go to items_
  std::size_t handedOver_ = 0;   // items of this document handed over
  std::size_t itemArrays_ = 0;   // "items" arrays of its root object handed over (two: a duplicate key)
};

}  // namespace

bool looksLikeJsonStream(std::string_view text) {
  std::string_view head = text.substr(0, kSniffBytes);
  while (!head.empty()) {
    const char c = head.front();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      head.remove_prefix(1);
    } else if (head.size() >= 2 && c == '\xC2' && (head[1] == '\x85' || head[1] == '\xA0')) {
      head.remove_prefix(2);  // U+0085 and U+00A0 are unicode.IsSpace too
    } else {
      break;
    }
  }
  return !head.empty() && head.front() == '{';
}

ParseResult parseJsonStream(std::string_view text, const Limits& limits, const DocumentSink& sink,
                            ListItemSink* items, JsonFallback* fallback) {
  return JsonStreamParser(text, limits, sink ? items : nullptr, fallback).run(sink);
}

}  // namespace gpuguard::yaml
