// The fast path's scanner (yaml_fast_path.h), shared by
// yaml_fast_path.cpp (block structure) and yaml_fast_path_scalars.cpp
// (scalars, flow collections). Each "why" below refers to yaml-cpp 0.7's
// scanner (scanner.cpp, scantoken.cpp, scanscalar.cpp, exp.h) and parser
// (singledocparser.cpp), whose behaviour it reproduces.
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "yaml/yaml_fast_path.h"

namespace gpuguard::yaml::detail::fastpath {

// Thrown inside the scanner when the section is outside the subset.
struct Bail {};

[[noreturn]] inline void bail() { throw Bail{}; }

inline bool isBlankOrEnd(std::string_view s, std::size_t i) { return i >= s.size() || s[i] == ' ' || s[i] == '\n'; }

// Hands the scanner's events to the handler a chunk at a time (stream()).
class ChunkedHandOver {
 public:
  ChunkedHandOver(YAML::EventHandler& handler, std::size_t chunkEvents)
      : handler_(handler), chunkEvents_(chunkEvents) {}
  // `events` (all final: no later text can take one back) to the handler
  // when they fill a chunk, or when `last`; then cleared.
  void offer(Events& events, std::string_view section, bool last);
  bool handlerCalled() const { return handlerCalled_; }
  // What the handler threw, if anything: thrown on.
  void rethrowHandlerError() const;

 private:
  YAML::EventHandler& handler_;
  std::size_t chunkEvents_;
  bool handlerCalled_ = false;
  std::exception_ptr handlerError_;  // once set, the handler gets nothing more
};

class Scanner {
 public:
  // `out`: the events not yet handed over to `chunks`.
  Scanner(std::string_view text, Events& out, ChunkedHandOver& chunks) : s_(text), out_(out), chunks_(chunks) {}
  // The whole section: one document, then nothing but blanks and comments.
  void document();

 private:
  // Where a node starts: alone on its line, after "- ", or after "key: ".
  enum class Place { OwnLine, AfterEntry, AfterValue };

  // --- lines (yaml_fast_path.cpp) ---
  // From `p` (on the current line), skips blanks and a comment to the end
  // of the line, then blank and comment lines, to the next content line.
  void toNextContentLine(std::size_t p);
  void enterLine(std::size_t lineStart);  // the content line at or after lineStart
  int indent() const { return static_cast<int>(first_ - lineStart_); }
  bool isEntry(std::size_t p) const { return s_[p] == '-' && isBlankOrEnd(s_, p + 1); }

  // --- events ---
  Event& push(Event::Kind kind, std::size_t pos);  // pos on the current line
  void pushEnd(Event::Kind kind);                  // an event without a mark
  void pushMissingNode();                          // a null whose mark is the next token's
  void pushScalar(std::size_t pos, std::size_t begin, std::size_t end, bool plain);
  void pushArenaScalar(std::size_t pos, const std::string& value);
  // Between the entries of a block collection, where every event pushed
  // is final: the only one ever taken back is a MapStart whose key turns
  // out not to be one, before its map's first entry.
  void atSafePoint() { chunks_.offer(out_, s_, false); }

  // --- block structure (yaml_fast_path.cpp) ---
  // Each leaves the scanner at the first content line after the node.
  void blockNode(int parentIndent);  // the node on the current content line
  // The node at p, on the line where it starts; `topIndent` is the column
  // of the collection it is in (yaml-cpp's top indent, for block scalars).
  void inlineNode(std::size_t p, Place place, int topIndent);
  void blockSequence(int column);  // its first '-' is the current line's
  void blockMap(int column, std::size_t afterColon);  // MapStart and the first key emitted
  void nodeAfterIndicator(std::size_t afterIndicator, int column, bool mapValue);
  // The value after "key:" (or the entry after "-") that is not on its line.
  void nodeOnNextLines(std::size_t afterIndicator, int column, bool mapValue);
  // One level of nesting while it lives.
  class Nest {
   public:
    explicit Nest(Scanner& scanner);
    ~Nest() { --scanner_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Scanner& scanner_;
  };
  char at(std::size_t i) const { return i < s_.size() ? s_[i] : '\0'; }  // '\0' is never in the subset

  // --- scalars and flow collections (yaml_fast_path_scalars.cpp) ---
  // Where the plain scalar at p ends on its line (before trailing blanks),
  // and why: at ": " (a key), at " #" or the end of the line.
  struct PlainEnd {
    std::size_t end;
    std::size_t stop;
    bool atColon;
  };
  PlainEnd scanPlainInBlock(std::size_t p) const;
  static bool canStartPlainInBlock(std::string_view s, std::size_t p);
  // A quoted scalar that ends on its line: emits it, returns the position
  // after its closing quote.
  std::size_t quotedScalar(std::size_t p);
  // The key at p if the line holds "key:" there; returns the position after
  // the ':', or npos (not a key; nothing emitted).
  std::size_t mapKey(std::size_t p);
  // A single-line scalar or flow collection as a node; returns where it ends.
  std::size_t scalarNode(std::size_t p);
  struct BlockScalar {
    enum Chomp { Strip, Clip, Keep };
    bool folded = false;
    Chomp chomp = Clip;
    int indent = 1;
    bool detectIndent = true;
  };
  void blockScalar(std::size_t p, int topIndent);
  std::size_t blockScalarText(std::size_t q, BlockScalar& b, std::size_t& lineStart, int& line);
  std::size_t skipBlanks(std::size_t i) const;
  std::size_t flowCollection(std::size_t p);
  std::size_t flowKey(std::size_t p);
  std::size_t flowItem(std::size_t p);
  std::size_t flowPlain(std::size_t p);

  std::string_view s_;
  Events& out_;
  ChunkedHandOver& chunks_;
  std::size_t lineStart_ = 0;  // the current line
  int line_ = 0;               // its number (0-based)
  std::size_t first_ = 0;      // its first non-blank byte; at the end: s_.size()
  bool eof_ = false;
  bool eofMidLine_ = false;  // the text ends without a line break
  int depth_ = 0;
  std::string value_;  // scratch
};

}  // namespace gpuguard::yaml::detail::fastpath
