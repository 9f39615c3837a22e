// Stage 4 of yaml_to_json.cpp's pipeline: yaml-cpp events -> nlohmann::json
// and the source map (class Builder, a YAML::EventHandler), one section at
// a time, and yaml-cpp's errors reworded like libyaml/go-yaml.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <istream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail {
namespace {

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
    doc_->sources = SourceMap::fromEntries(std::move(entries));
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
    appendJsonPointerToken(ptr_, f.key);
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
    appendJsonPointerToken(prefix, key);
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
    appendJsonPointerToken(pointer, key);
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

class BuilderSectionParser final : public SectionParser {
 public:
  explicit BuilderSectionParser(const Limits& limits) : builder_(limits) {}
  std::optional<ParseError> parse(std::string_view text, const Section& section, Document& doc) override {
    return parseSection(text, section, builder_, doc);
  }

 private:
  Builder builder_;
};

}  // namespace

std::unique_ptr<SectionParser> makeSectionParser(const Limits& limits) {
  return std::make_unique<BuilderSectionParser>(limits);
}

}  // namespace gpuguard::yaml::detail
