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
// document, are checked here), NEL/LS/PS are not line breaks.
//
// A stream whose first non-space character is '{' is read as JSON, as
// kubectl does, and from a JSON syntax error on as YAML, as kubectl does
// since 1.33 (json_stream.h). A section that cannot be parsed is an
// error and parsing goes on with the next section, so one bad document does
// not hide the others.
//
// The stages live in files of their own (yaml_to_json_internal.h lists
// them); this file holds the source map and parseStream(), which runs them.

#include "yaml/yaml_to_json.h"

#include <algorithm>
#include <new>
#include <numeric>
#include <string>
#include <utility>

#include <yaml-cpp/exceptions.h>

#include "yaml/json_stream.h"
#include "yaml/yaml_to_json_internal.h"

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

namespace detail {

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
  if (msg.starts_with(E::UNKNOWN_ANCHOR)) return "unknown anchor '" + msg.substr(std::strlen(E::UNKNOWN_ANCHOR)) + "' referenced";
  return msg;
}

}  // namespace detail

namespace {

using namespace detail;

void noteError(ParseResult& result, ParseError error) {
  if (!result.error) result.error = error;
  result.errors.push_back(std::move(error));
}

}  // namespace

struct DocumentStream::State {
  Limits limits;
  std::optional<ParseError> refused;  // the input as a whole: nothing is read
  bool refusalListed = true;          // in ParseResult::errors too (not for the size limit)
  std::string converted;              // a UTF-16 text as UTF-8
  std::string withLineFeeds;          // lone CRs as LF
  std::string_view original;          // after the BOM, before the CRs became LF
  std::string_view src;               // what is cut and parsed
  bool json = false;
  std::vector<detail::Section> sections;
  std::size_t firstIndex = 0;  // of the first section in the stream (after a JSON object: 1)
};

namespace {

using namespace detail;

// What DocumentStream::read does for a YAML text: each section as kubectl
// cuts it, parsed on its own.
void readSections(const DocumentStream::State& s, ParseResult& result, const DocumentSink& sink,
                  const DocumentFilter& wanted, ListItemSink* items) {
  // Lone CRs are line breaks to kubectl's YAML parser, but its YAMLReader
  // cuts documents at "\n---" only, so a "---" between CR-only lines ends
  // kubectl's first document and the rest is ignored: with
  // Limits::onlyWhatKubectlReads it is dropped here too, with a warning
  // (KubectlDocuments); without, judged as the next document.
  std::optional<KubectlDocuments> kubectl;
  if (s.limits.onlyWhatKubectlReads && !s.withLineFeeds.empty()) kubectl.emplace(s.original, result);
  // A text read whole before it is handed over keeps its Lists whole too.
  const std::unique_ptr<SectionParser> parser = makeSectionParser(s.limits, sink && !kubectl ? items : nullptr);
  for (std::size_t i = 0; i < s.sections.size(); ++i) {
    const Section& sec = s.sections[i];
    if (kubectl && !kubectl->reads(sec)) continue;
    if (!kubectl && wanted && !wanted(s.src.substr(sec.begin, sec.end - sec.begin))) continue;
    if (sec.error) {
      if (kubectl) kubectl->parsed(false);
      noteError(result, *sec.error);
      continue;
    }
    if (s.limits.refuseFlowSequenceDocuments) {
      if (auto err = flowSequenceDocument(s.src, sec)) {
        noteError(result, std::move(*err));
        if (kubectl) kubectl->parsed(false);
        continue;
      }
    }
    Document doc;
    doc.index = s.firstIndex + i;  // counts the sections that failed too: the stream's numbering
    if (auto err = parser->parse(s.src, sec, doc)) {
      noteError(result, std::move(*err));
      if (kubectl) kubectl->parsed(false);
      continue;
    }
    if (sink && !kubectl) {
      sink(doc);
      continue;
    }
    result.documents.push_back(std::move(doc));
    if (kubectl) kubectl->parsed(true);
  }
  if (kubectl) kubectl->finish();  // the last document's warning
  if (!sink) return;
  for (Document& doc : result.documents) sink(doc);
  result.documents.clear();
}

// What DocumentStream::read does for a text that starts with '{': JSON, and
// YAML from where kubectl gives up on JSON (JsonFallback). When nothing at
// all reads, kubectl reports the JSON error: the YAML error names it too.
void readJsonThenYaml(const DocumentStream::State& s, ParseResult& result, const DocumentSink& sink,
                      ListItemSink* items) {
  JsonFallback fallback;
  result = parseJsonStream(s.src, s.limits, sink, items, &fallback);
  if (!fallback.toYaml) return;
  // The rest, with its lines and its documents numbered as in the whole text.
  DocumentStream::State rest;
  rest.limits = s.limits;
  rest.src = rest.original = s.src.substr(fallback.offset);
  const std::string_view before = s.src.substr(0, fallback.offset);
  rest.sections = splitSections(rest.src, rest.limits, 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n')));
  rest.firstIndex = fallback.documents;
  std::size_t yamlDocuments = 0;
  DocumentSink counted;
  if (sink) {
    counted = [&](Document& doc) {
      ++yamlDocuments;
      sink(doc);
    };
  }
  const std::size_t kept = result.documents.size();
  readSections(rest, result, counted, {}, items);
  yamlDocuments += result.documents.size() - kept;
  if (fallback.documents > 0 || yamlDocuments > 0 || !result.error) return;
  const ParseError& j = fallback.jsonError;
  const std::string why = " (the text starts with '{': kubectl reads it as JSON first, and that fails too: " + j.message +
                          " at line " + std::to_string(j.position.line) + ", column " + std::to_string(j.position.column) + ")";
  result.error->message += why;
  result.errors.front().message += why;
}

// The text as the stages read it: no BOM, UTF-8, lone CRs as LF; cut into
// sections unless it is a JSON stream.
void prepare(DocumentStream::State& s, std::string_view text) {
  if (text.size() > s.limits.maxDocumentBytes) {
    s.refused = ParseError{{1, 1}, "input is larger than the limit of " + std::to_string(s.limits.maxDocumentBytes) + " bytes"};
    s.refusalListed = false;
    return;
  }
  std::string_view src = text;
  if (src.size() >= 3 && src.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    src.remove_prefix(3);
  } else if (src.size() >= 2 && (src.compare(0, 2, "\xFF\xFE") == 0 || src.compare(0, 2, "\xFE\xFF") == 0)) {
    s.converted = utf16ToUtf8(src.substr(2), src[0] == '\xFE');
    src = s.converted;
  }
  s.original = src;
  if (std::optional<std::string> lf = loneCrAsLf(src)) {
    s.withLineFeeds = std::move(*lf);
    src = s.withLineFeeds;
  }
  s.src = src;
  s.json = looksLikeJsonStream(src);
  if (!s.json) s.sections = splitSections(src, s.limits);
}

}  // namespace

DocumentStream::DocumentStream(std::string_view text, const Limits& limits) : state_(std::make_unique<State>()) {
  state_->limits = limits;
  try {
    prepare(*state_, text);
  } catch (const std::bad_alloc&) {
    state_->refused = ParseError{{}, "out of memory while parsing YAML"};
  } catch (const std::exception& e) {
    state_->refused = ParseError{{}, std::string("internal error while parsing YAML: ") + e.what()};
  }
}

DocumentStream::~DocumentStream() = default;

bool DocumentStream::singleDocument() const {
  return !state_->refused && !state_->json && state_->sections.size() <= 1;
}

namespace {

// A ListItemSink whose throws are known as the sink's own (DocumentStream::read).
class GuardedItems final : public ListItemSink {
 public:
  GuardedItems(ListItemSink& inner, bool& inSink) : inner_(inner), inSink_(inSink) {}
  void item(std::size_t position, Document& item) override {
    inSink_ = true;
    inner_.item(position, item);
    inSink_ = false;
  }
  void discard() override {
    inSink_ = true;
    inner_.discard();
    inSink_ = false;
  }

 private:
  ListItemSink& inner_;
  bool& inSink_;
};

}  // namespace

ParseResult DocumentStream::read(const DocumentSink& sink, const DocumentFilter& wanted, ListItemSink* items) const {
  const State& s = *state_;
  ParseResult result;
  if (s.refused) {
    result.error = s.refused;
    if (s.refusalListed) result.errors.push_back(*s.refused);
    return result;
  }
  // What the sink throws is its own failure, not the parser's.
  bool inSink = false;
  DocumentSink guarded;
  if (sink) {
    guarded = [&](Document& doc) {
      inSink = true;
      sink(doc);
      inSink = false;
    };
  }
  std::optional<GuardedItems> guardedItems;
  if (sink && items) guardedItems.emplace(*items, inSink);
  ListItemSink* itemSink = guardedItems ? &*guardedItems : nullptr;
  try {
    if (s.json) {
      if (wanted && !wanted(s.src)) return result;
      readJsonThenYaml(s, result, guarded, itemSink);
      return result;
    }
    readSections(s, result, guarded, wanted, itemSink);
  } catch (const std::bad_alloc&) {
    if (inSink) throw;
    noteError(result, ParseError{{}, "out of memory while parsing YAML"});
  } catch (const std::exception& e) {
    if (inSink) throw;
    noteError(result, ParseError{{}, std::string("internal error while parsing YAML: ") + e.what()});
  }
  return result;
}

ParseResult parseStream(std::string_view text, const Limits& limits) { return DocumentStream(text, limits).read(); }

}  // namespace gpuguard::yaml
