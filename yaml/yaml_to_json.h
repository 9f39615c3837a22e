// YAML text -> nlohmann::json, the way kubectl reads a manifest.
//
// kubectl (sigs.k8s.io/yaml over go-yaml v2) resolves plain scalars with
// YAML 1.1 rules: yes/no/on/off/y/n are booleans, 010 is the octal number 8,
// 0x10 is 16, 1_000 is 1000, ~ is null. We reproduce that resolution so the
// rule engine judges the same values the API server would receive, and we
// keep where every node came from (line, column, the text as written) so a
// finding on a JSON pointer maps back to the user's file.
//
// What "the way kubectl reads it" covers (details in yaml_to_json.cpp):
//  * Documents are split like k8s.io/apimachinery's YAMLReader: on lines that
//    start with "---"; a separator followed by anything but blanks or a
//    comment ("--- !tag", "---foo", "--- {a: 1}") is an error; an empty
//    section yields no document, a section holding only comments or blank
//    lines yields a Document whose value is null. A section that cannot be
//    parsed is an error and the next sections are still parsed (kubectl
//    stops there; a linter should show everything at once).
//  * A stream whose first non-space character is '{' is JSON, as in
//    kubectl's YAMLOrJSONDecoder (json_stream.h).
//  * Scalars resolve like go-yaml v2.4 resolve(); map keys become strings
//    like sigs.k8s.io/yaml convertToJSONableObject (1 -> "1", 010 -> "8",
//    yes -> "true"; a null, uint64 or collection key is an error).
//  * Merge keys (<<) follow go-yaml v2: applied in place, in order, so a
//    merge overrides keys written before it and is overridden by keys
//    written after it; in "<<: [*a, *b]" earlier maps win.
//  * Duplicate keys: kubectl -f keeps the last value silently (its decoder
//    is sigs.k8s.io/yaml's non-strict YAMLToJSON, and it sends JSON, so the
//    server's strict field validation never sees the duplicate); kustomize /
//    go-yaml v3 reject them. We keep the last value and add a warning, or
//    stop with an error if Limits::rejectDuplicateKeys.
//  * .inf/.nan values cannot be encoded as JSON: an error, as in kubectl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::yaml {

struct Position {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based, in Unicode characters (code points)

  friend bool operator==(const Position&, const Position&) = default;
};

// Where one JSON node came from.
struct NodeOrigin {
  Position position;       // of the value node (for map entries: the value).
                           // Empty value ("key:" with nothing): the key's position.
                           // Alias "*a": the alias; its children: where the anchor wrote them.
  Position keyPosition;    // of the key, for values that are map entries
  std::string writtenText; // plain (unquoted) scalars only: the text as written
                           // ("010", "yes", "~"; "" for an empty value). Aliases of
                           // a plain scalar carry the anchored text.
  bool plainScalar = false;
};

// Maps RFC 6901 JSON pointers ("/spec/containers/0/image") to origins.
// The document root is the pointer "".
class SourceMap {
 public:
  struct Entry {
    std::string pointer;
    NodeOrigin origin;
  };

  // Adds or replaces the origin of one pointer.
  void add(std::string pointer, NodeOrigin origin);
  // A map of entries in document order, in one sort (a later duplicate
  // pointer wins).
  static SourceMap fromEntries(std::vector<Entry> entries);
  const NodeOrigin* find(std::string_view pointer) const;
  // The closest known origin: the pointer itself, else its nearest ancestor
  // ("/spec/x/y" unknown -> "/spec/x" -> "/spec" -> ""); {0,0} if none.
  Position locate(std::string_view pointer) const;

  // Every entry, in document order (handy to scan all plain scalars).
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  friend class SourceMapBuilder;  // bulk construction (yaml_to_json.cpp)
  std::size_t lowerBound(std::string_view pointer) const;

  std::vector<Entry> entries_;        // document order
  std::vector<std::uint32_t> sorted_; // indices into entries_, by pointer
};

// Something kubectl accepts silently but a reviewer wants to know about.
struct ParseWarning {
  enum class Kind {
    DuplicateKey,    // a map key written twice: the first value is dropped
    IgnoredContent,  // text kubectl never reads: after a document's end ("..."), or
                     // after a "---" that only a lone CR precedes (Limits::onlyWhatKubectlReads)
  };
  Position position;
  std::string message;  // e.g. mapping key "image" already defined at line 7
  std::string pointer;  // the JSON pointer concerned, if any
  Kind kind = Kind::DuplicateKey;
};

struct Document {
  nlohmann::json value;   // null for an empty document
  SourceMap sources;
  Position start;         // where the document's content starts in the stream
  std::size_t index = 0;  // 0-based position in the stream
  std::vector<ParseWarning> warnings;
  // A `kind: List` whose items went to a ListItemSink as they were parsed:
  // `value`'s items are null, each in its place, and neither `sources` nor
  // `warnings` hold anything of them.
  bool itemsHandedOver = false;
};

struct ParseError {
  Position position;
  std::string message;  // e.g. "found character that cannot start any token"
};

struct Limits {
  std::size_t maxDepth = 256;               // nesting of maps/sequences (yaml-cpp itself stops at ~500)
  std::size_t maxNodes = 2'000'000;         // per document, after alias expansion (keys count)
  std::size_t maxDocumentBytes = 64u << 20; // input size
  std::size_t maxScalarBytes = 8u << 20;    // one scalar (the API server takes <= 3 MiB bodies)
  std::size_t maxFlowBytes = 8u << 20;      // one [..] / {..} collection: yaml-cpp buffers
                                            // ~100 bytes of tokens per byte of flow text
  bool rejectDuplicateKeys = false;         // true: a duplicate key is an error (go-yaml v3)
  // true: a YAML document written as a flow sequence ("[...]", a JSON
  // array) is an error, found from its first character without parsing it.
  // kubectl refuses such a file ("error validating data: invalid object to
  // validate"), and yaml-cpp takes time quadratic in the size of one large
  // flow collection.
  bool refuseFlowSequenceDocuments = false;
  // true: only the documents kubectl reads of a text with CR-only line
  // breaks. kubectl's reader ends lines at LF only, so a "---" line after a
  // lone CR cuts no document, and its YAML parser reads the first document
  // of what it is given: the documents after such a line (up to the next
  // "---" that starts an LF line) are dropped, and the one kubectl reads
  // carries an IgnoredContent warning saying so. A "---" line that goes on
  // past a lone CR with content is kubectl's "invalid Yaml document
  // separator": an error. false: every document is read (gpuguard's own
  // files: policies, facts).
  bool onlyWhatKubectlReads = false;
};

struct ParseResult {
  std::vector<Document> documents;  // every document that parsed, in stream order
  std::optional<ParseError> error;  // the first error, if any
  std::vector<ParseError> errors;   // every error, one per section that did not parse
};

// Parses a multi-document stream. Never throws; malformed, hostile or
// oversized input yields an error with a position.
ParseResult parseStream(std::string_view text, const Limits& limits = {});

// A document of a stream, handed over as soon as it is parsed.
using DocumentSink = std::function<void(Document&)>;
// Whether to parse a document, judged from its text alone: a YAML section.
// A JSON stream stops at its first error, so its values do not stand alone:
// the filter is asked once, of the whole stream.
using DocumentFilter = std::function<bool(std::string_view text)>;

// The items of a `kind: List` document (a map whose kind is "List" and
// whose items is a sequence), each handed over as soon as it is parsed,
// before the rest of the List: a List is often one whole cluster's objects,
// and this way only one item's tree is alive at a time. kubectl writes
// `kind` after `items`, so whether the document is a List is known only at
// its end: the items of every map's top-level `items` sequence are handed
// over, and discard() says they were not a List's after all (the document
// is then parsed again, whole, and handed to the DocumentSink as any other)
// or that the document failed to parse.
class ListItemSink {
 public:
  virtual ~ListItemSink() = default;
  // Item `position` of the document being parsed, as a Document of its own:
  // the item's value, source map and warnings with pointers relative to the
  // item (as if "/items/<position>" were its root), the List's index.
  virtual void item(std::size_t position, Document& item) = 0;
  // Forget the items handed over since the last document went to the
  // DocumentSink.
  virtual void discard() = 0;
};

// parseStream() one document at a time, so that only one document's tree
// (and source map) is alive at once: the text is checked and cut into
// sections once, then read as often as asked, e.g. a cheap pass over the
// few documents that may matter to the others, then every document. `text`
// must outlive the stream.
class DocumentStream {
 public:
  explicit DocumentStream(std::string_view text, const Limits& limits = {});
  ~DocumentStream();
  DocumentStream(const DocumentStream&) = delete;
  DocumentStream& operator=(const DocumentStream&) = delete;

  // At most one YAML document (false for a JSON stream, not cut in advance).
  bool singleDocument() const;

  // Parses, in stream order, the documents `wanted` accepts (every one when
  // it is empty) and hands each to `sink` before the next is parsed; with no
  // sink they are kept in the result, as parseStream() keeps them. The
  // result holds the errors of what was read. What `sink` throws is thrown
  // on. With Limits::onlyWhatKubectlReads, a text with CR-only line breaks
  // is read whole (every document, `wanted` or not) before its documents
  // are handed over: which document carries the warning about what kubectl
  // drops is known only at the end.
  // `items` (with a sink only): a List's items go to it one by one, and
  // the List to `sink` with Document::itemsHandedOver. Not for a text with
  // CR-only line breaks under Limits::onlyWhatKubectlReads, read whole.
  ParseResult read(const DocumentSink& sink = {}, const DocumentFilter& wanted = {},
                   ListItemSink* items = nullptr) const;

  struct State;  // the prepared text and its sections (yaml_to_json.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace gpuguard::yaml
