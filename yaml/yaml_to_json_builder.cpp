// yaml_to_json_builder.h's Builder: the yaml-cpp events, scalars and map
// keys as go-yaml and sigs.k8s.io/yaml decode them, and the checks go-yaml
// makes that yaml-cpp does not (tabs, aliasing, unterminated quotes).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "yaml/yaml_to_json_builder.h"

namespace gpuguard::yaml::detail::builder {

namespace {

// go-yaml's allowedAliasRatio (decode.go).
double allowedAliasRatio(std::uint64_t decodeCount) {
  constexpr double low = 400000, high = 4000000;
  if (static_cast<double>(decodeCount) <= low) return 0.99;
  if (static_cast<double>(decodeCount) >= high) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(decodeCount) - low) / (high - low));
}

}  // namespace

void Builder::begin(std::string_view chunk, int firstLine, bool ascii, Document* doc) {
  chunk_ = chunk;
  firstLine_ = firstLine;
  ascii_ = ascii;
  doc_ = doc;
  ptr_.clear();
  frames_.clear();
  log_.clear();
  // Handed over item by item, a List's log holds one item at a time.
  log_.reserve(itemSink_ ? 1024 : chunk.size() / 24 + 16);
  anchors_.clear();
  pendingAnchorName_.clear();
  decodes_ = 0;
  aliasDecodes_ = 0;
  lastScalarPos_ = -1;
  lastScalarPlain_ = true;
  handedOver_ = 0;
  itemSequences_ = 0;
  rootItemsKeys_ = 0;
  itemsAnchored_ = false;
  rootMerged_ = false;
}

void Builder::restart() {
  if (itemSink_ != nullptr && handedOver_ > 0) itemSink_->discard();
  *doc_ = emptyDocument(doc_->index);
  begin(chunk_, firstLine_, ascii_, doc_);
}

bool Builder::handedItemsStand() const {
  if (handedOver_ == 0) return true;
  if (itemSequences_ != 1 || rootItemsKeys_ != 1 || itemsAnchored_ || rootMerged_ || !doc_->value.is_object()) return false;
  const json& value = doc_->value;
  const auto kind = value.find("kind");
  const auto items = value.find("items");
  return kind != value.end() && kind->is_string() && kind->get_ref<const std::string&>() == "List" &&
         items != value.end() && items->is_array();
}

void Builder::finish() {
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

Position Builder::positionOnLine(const YAML::Mark& m, std::size_t off) const {
  std::size_t lineStart = static_cast<std::size_t>(m.pos - m.column);
  return {firstLine_ + m.line, 1 + countChars(chunk_.substr(lineStart, off - lineStart))};
}

Position Builder::positionBefore(const YAML::Mark& m, std::size_t off) const {
  int line = m.line;
  for (std::size_t i = off; i < static_cast<std::size_t>(m.pos); ++i) line -= chunk_[i] == '\n' ? 1 : 0;
  std::size_t ls = off == 0 ? npos : chunk_.rfind('\n', off - 1);
  ls = ls == npos ? 0 : ls + 1;
  return {firstLine_ + line, 1 + countChars(chunk_.substr(ls, off - ls))};
}

std::optional<Position> Builder::innermostOpenFlow() const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    if (it->flow) return it->start;
  return std::nullopt;
}

void Builder::OnDocumentStart(const YAML::Mark& mark) {
  doc_->start = position(mark);
  decodes_ = 1;  // go-yaml decodes the document node itself
}

void Builder::OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) {
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

void Builder::OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) {
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

void Builder::OnAlias(const YAML::Mark& mark, YAML::anchor_t id) {
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
  const std::size_t logStart = log_.size();
  placeNode(mark, json(a.value), std::move(origin));
  // Children: where the anchor wrote them, under the new pointer.
  for (const RelEntry& e : a.entries)
    if (!e.rel.empty()) log_.push_back(LogEntry{ptr_ + e.rel, e.origin, true});
  if (f) f->maxChildDepth = std::max(f->maxChildDepth, a.depth);
  if (f && f->listItems) handOverItem(logStart);
}

void Builder::failWantMap(const YAML::Mark& mark) const {
  fail(position(mark), "map merge requires map or sequence of maps as the value");
}

void Builder::failTooDeep(const YAML::Mark& mark) const {
  fail(position(mark), "maps and sequences nested deeper than the limit of " + std::to_string(lim_.maxDepth) + " levels");
}

void Builder::failTooManyNodes(const YAML::Mark& mark, bool alias) const {
  fail(position(mark), "document has more than " + std::to_string(lim_.maxNodes) + " nodes" +
                           (alias ? " once aliases are expanded (an alias bomb?)" : ""));
}

void Builder::failNonFinite(const YAML::Mark& mark, double d, const std::string& text) const {
  std::string go = std::isnan(d) ? "NaN" : (d > 0 ? "+Inf" : "-Inf");
  fail(position(mark), "cannot encode " + (text.empty() ? go : text) +
                           " as JSON (kubectl fails with \"json: unsupported value: " + go +
                           "\"); quote it if a string is meant");
}

void Builder::checkAliasing(const YAML::Mark& mark) const {
  if (aliasDecodes_ > 100 && decodes_ > 1000 &&
      static_cast<double>(aliasDecodes_) / static_cast<double>(decodes_) > allowedAliasRatio(decodes_))
    fail(position(mark), "document contains excessive aliasing (kubectl's YAML decoder refuses it)");
}

void Builder::checkTabs(const YAML::Mark& mark) const {
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

std::size_t Builder::nullWordAt(const YAML::Mark& mark) const {
  if (mark.pos < 0) return 0;
  std::string_view rest = chunk_.substr(std::min(chunk_.size(), static_cast<std::size_t>(mark.pos)));
  std::size_t n = 0;
  if (!rest.empty() && rest[0] == '~') n = 1;
  else if (rest.size() >= 4 && (rest.compare(0, 4, "null") == 0 || rest.compare(0, 4, "Null") == 0 || rest.compare(0, 4, "NULL") == 0)) n = 4;
  if (n == 0) return 0;
  if (n < rest.size() && std::strchr(" \t\r\n,]}#", rest[n]) == nullptr) return 0;
  return n;
}

bool Builder::keyColonFollows(std::size_t p) const {
  while (p < chunk_.size() && (chunk_[p] == ' ' || chunk_[p] == '\t')) ++p;
  return p < chunk_.size() && chunk_[p] == ':' &&
         (p + 1 >= chunk_.size() || std::strchr(" \t\r\n,[]{}", chunk_[p + 1]) != nullptr);
}

Position Builder::missingNodePosition(const YAML::Mark& mark) const {
  const Frame* f = frames_.empty() ? nullptr : &frames_.back();
  if (f && f->kind == Frame::Kind::Map && !f->expectKey) return f->keyPos;  // "key:" with no value
  if (f && f->kind == Frame::Kind::Seq && mark.pos >= 0) {                   // "-" with no value
    std::size_t p = std::min(chunk_.size(), static_cast<std::size_t>(mark.pos));
    while (p > 0 && std::strchr(" \t\r\n", chunk_[p - 1]) != nullptr) --p;
    if (p > 0 && chunk_[p - 1] == '-') return positionBefore(mark, p - 1);
  }
  return position(mark);
}

Resolved Builder::resolveTagged(const std::string& tag, const std::string& value, const YAML::Mark& mark, std::string& decoded) const {
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

json Builder::toJson(const Resolved& r, const std::string& value, const std::string& decoded, const std::string& tag) {
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

std::string Builder::keyString(const Resolved& r, const std::string& text, const std::string& written, const YAML::Mark& mark) const {
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

std::string Builder::keyFromJson(const json& v, const YAML::Mark& mark) const {
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

void Builder::checkLastQuotedScalar() const {
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

}  // namespace gpuguard::yaml::detail::builder
