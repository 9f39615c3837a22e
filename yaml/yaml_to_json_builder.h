// Stage 4 of yaml_to_json.cpp's pipeline: yaml-cpp events -> nlohmann::json
// and the source map (class Builder, a YAML::EventHandler), one section at a
// time. Its definitions: yaml_to_json_builder.cpp (the events, scalars and
// keys, the checks go-yaml makes that yaml-cpp does not) and
// yaml_to_json_builder_tree.cpp (placing nodes, containers, anchors and
// merge keys). Not part of the yaml/ interface: only those files and
// yaml_to_json_section_parser.cpp include it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail::builder {

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

// Where each child of a map was written in the log, so that replacing a
// duplicated or merged key kills its old entries without scanning the
// whole map's log (which made n duplicates cost n^2). Built the first time
// a map meets a duplicate key or a merge; plain maps never pay for it.
struct ChildIndex {
  struct Range {
    std::size_t begin = 0, end = 0;  // log_[begin, end)
  };
  // Keyed by the child's JSON pointer token (escaped, as in the log).
  std::unordered_map<std::string, std::vector<Range>> ranges;
  std::string openToken;  // the child being written (its range still growing)
  std::size_t openBegin = 0;
  bool open = false;
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
  bool listItems = false;       // the root map's "items" sequence, its items handed over (handItemsTo)
  json* value = nullptr;
  std::unique_ptr<json> owned;  // MergeMap / MergeItem
  std::size_t ptrLen = 0;       // this container's pointer is ptr_[0, ptrLen)
  std::size_t logStart = 0;     // first log entry of this subtree
  std::size_t warningStart = 0; // listItems: the document's first warning about the next item
  std::size_t index = 0;        // next sequence index
  std::size_t maxChildDepth = 0;
  YAML::anchor_t anchor = 0;
  std::uint64_t decodesAtStart = 0;
  Position start;
  std::string key;
  Position keyPos;
  std::unique_ptr<std::set<std::string, std::less<>>> explicitKeys;  // once a merge happened
  std::unique_ptr<ChildIndex> children;                               // once a key was replaced
  std::vector<MergeSource> sources;                                   // MergeSeq
};

// A Document with nothing parsed into it yet, at `index` of the stream.
inline Document emptyDocument(std::size_t index) {
  Document doc;
  doc.index = index;
  return doc;
}

constexpr std::string_view kMergeTag = "tag:yaml.org,2002:merge";

class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(const Limits& limits) : lim_(limits) {}

  void begin(std::string_view chunk, int firstLine, bool ascii, Document* doc);

  // After the document's events: the unterminated-quote check and the
  // source map.
  void finish();

  // Undoes what the events so far did, to the document (emptied) and the
  // sink (its items discarded), and begins the section again: the YAML
  // fast path bailed out after handing some events over, and yaml-cpp
  // parses the section from scratch.
  void restart();

  // Until the next call: hand each item of the root map's "items" sequence
  // to `items` once it is complete (nullptr: keep them in the document).
  // Set before begin().
  void handItemsTo(ListItemSink* items) { itemSink_ = items; }
  // Of the document last built: how many items went to the sink, and
  // whether the document is the List they belong to (a map of kind "List"
  // whose "items", set once, not anchored and not touched by a merge key,
  // is the sequence they came from). When not, its value is not the document's: the
  // caller parses it again without a sink.
  std::size_t itemsHandedOver() const { return handedOver_; }
  bool handedItemsStand() const;

  Position position(const YAML::Mark& m) const;

  // Position of byte `off` of the chunk, on the same line as mark `m`.
  Position positionOnLine(const YAML::Mark& m, std::size_t off) const;

  // Position of byte `off`, counting lines back from mark `m` (off <= m.pos).
  Position positionBefore(const YAML::Mark& m, std::size_t off) const;

  // Where the innermost flow collection still open was opened, if any.
  std::optional<Position> innermostOpenFlow() const;

  // --- EventHandler ---

  void OnDocumentStart(const YAML::Mark& mark) override;
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark&, const std::string& name) override { pendingAnchorName_ = name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override;

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override;

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t id) override;

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

  [[noreturn]] void failWantMap(const YAML::Mark& mark) const;
  [[noreturn]] void failTooDeep(const YAML::Mark& mark) const;
  [[noreturn]] void failTooManyNodes(const YAML::Mark& mark, bool alias) const;
  [[noreturn]] void failNonFinite(const YAML::Mark& mark, double d, const std::string& text) const;

  Frame* top() { return frames_.empty() ? nullptr : &frames_.back(); }

  void countDecode(const YAML::Mark& mark);

  // go-yaml decode.go: "document contains excessive aliasing".
  void checkAliasing(const YAML::Mark& mark) const;

  void registerAnchor(YAML::anchor_t anchor);

  // Tabs: libyaml (hence go-yaml) only skips a tab as separation where a
  // simple key is not allowed, so in block context a tab at the start of a
  // line or right after "- ", "? " or ": " "cannot start any token".
  // yaml-cpp accepts some of these ("key:\tvalue"), so check node starts.
  void checkTabs(const YAML::Mark& mark) const;

  // Length of "~"/"null"/"Null"/"NULL" written at the mark, else 0.
  std::size_t nullWordAt(const YAML::Mark& mark) const;

  // Is the word ending at `p` a key ("null: x")? Then a null reported at its
  // position was a missing value that borrowed the next token's mark.
  bool keyColonFollows(std::size_t p) const;

  Position missingNodePosition(const YAML::Mark& mark) const;

  // Resolution with an explicit tag, like go-yaml's resolve(tag, in) +
  // scalar(). `decoded` receives a !!binary value's bytes.
  Resolved resolveTagged(const std::string& tag, const std::string& value, const YAML::Mark& mark, std::string& decoded) const;

  static bool isBinary(const std::string& tag) { return tag == "tag:yaml.org,2002:binary"; }

  static json toJson(const Resolved& r, const std::string& value, const std::string& decoded, const std::string& tag);

  // sigs.k8s.io/yaml convertToJSONableObject: the JSON name of a map key.
  std::string keyString(const Resolved& r, const std::string& text, const std::string& written, const YAML::Mark& mark) const;

  std::string keyFromJson(const json& v, const YAML::Mark& mark) const;

  void setKey(Frame& f, std::string key, Position keyPos);

  void setMergeKey(Frame& f, Position keyPos);

  void addEntry(NodeOrigin&& origin) { log_.push_back(LogEntry{ptr_, std::move(origin), true}); }

  std::string pointerOf(const Frame& f) const { return ptr_.substr(0, f.ptrLen); }

  // f's ChildIndex, built from f's log on first use (every entry of f's
  // children is complete then: f is the frame on top).
  ChildIndex& childIndex(Frame& f);

  // The index's growing range (the child last placed) ends here.
  void closeOpenChild(ChildIndex& index) const;

  // Records log_[begin, end) (entries of f written by a merge) under the
  // children their pointers name.
  static void indexEntries(ChildIndex& index, const std::vector<LogEntry>& log, std::size_t ptrLen, std::size_t begin,
                           std::size_t end);

  // Marks the entries of f's child `key` (and below) as gone.
  void killSubtree(Frame& f, std::string_view key);

  void reportDuplicate(Frame& f, const std::string& key);

  json* mapSlot(Frame& f);

  // Puts a node into its parent (or the document root) and records its
  // origin under its pointer, which is left in ptr_.
  json* placeNode(const YAML::Mark& mark, json&& v, NodeOrigin&& origin);

  void placeScalar(const YAML::Mark& mark, json&& v, NodeOrigin&& origin, YAML::anchor_t anchor);

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

  void openContainer(const YAML::Mark& mark, Frame::Kind kind, YAML::anchor_t anchor, bool flow);

  // Whether the container being opened (its node placed, its pointer in
  // ptr_) is the root map's "items" sequence, whose items are handed over.
  bool isListItems(const Frame* parent, Frame::Kind kind) const;

  // The last item of the items sequence on top, complete (its first log
  // entry at `logStart`): to the sink as a Document of its own.
  void handOverItem(std::size_t logStart);

  // The entries of a merge source (relative to the target map), taken out of
  // the log: applyMerge() re-adds them in go-yaml's precedence order.
  std::vector<RelEntry> extractEntries(std::size_t logStart, std::size_t prefixLen);

  void closeContainer();

  // go-yaml v2 merge: every key of the source is set in the target, replacing
  // what is there (keys written later in the target replace it again).
  void applyMerge(Frame& target, const MergeSource& src);

  // yaml-cpp accepts a quoted scalar that runs to the end of the input;
  // go-yaml: "found unexpected end of stream" while scanning it.
  void checkLastQuotedScalar() const;

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
  ListItemSink* itemSink_ = nullptr;
  std::size_t handedOver_ = 0;
  std::size_t itemSequences_ = 0;  // "items" sequences of the root map whose items went to the sink
  std::size_t rootItemsKeys_ = 0;  // times the root map's "items" was set (twice: the first is replaced)
  bool itemsAnchored_ = false;     // one of them had an anchor: an alias of it would copy nulls
  bool rootMerged_ = false;        // a merge key wrote into the root map (it may replace "items")
};

// Run for every node: inline.
inline Position Builder::position(const YAML::Mark& m) const {
  if (m.is_null() || m.line < 0 || m.column < 0) return {firstLine_, 1};
  int col = m.column + 1;
  if (!ascii_ && m.pos >= m.column && static_cast<std::size_t>(m.pos) <= chunk_.size())
    col = 1 + countChars(chunk_.substr(static_cast<std::size_t>(m.pos - m.column), static_cast<std::size_t>(m.column)));
  return {firstLine_ + m.line, col};
}

inline void Builder::countDecode(const YAML::Mark& mark) {
  if (++decodes_ > lim_.maxNodes) failTooManyNodes(mark, aliasDecodes_ > 0);
  if (aliasDecodes_ > 100) checkAliasing(mark);
}

}  // namespace gpuguard::yaml::detail::builder
