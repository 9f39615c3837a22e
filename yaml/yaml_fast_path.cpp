// yaml_fast_path.h: the entry point and its chunks of events, the lines of
// a section, and its block structure (mappings and sequences, by
// indentation, as yaml-cpp's indent stack and simple keys give them).
#include <cstring>
#include <limits>

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/emitterstyle.h>
#include <yaml-cpp/mark.h>

#include "yaml/yaml_fast_path_scanner.h"

namespace gpuguard::yaml::detail::fastpath {

namespace {

constexpr std::size_t npos = std::string_view::npos;

// Bytes the subset never holds: control characters (tabs and CR among
// them: yaml-cpp's tab and CRLF rules are left to it). A first byte of 0x80
// or more may be a byte-order mark, which yaml-cpp's stream drops from its
// positions.
bool plainBytes(std::string_view s) {
  if (s.empty()) return true;
  if (static_cast<unsigned char>(s[0]) >= 0x80) return false;
  bool bad = false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    bad |= u < 0x20 && u != '\n';
  }
  return !bad;
}

// A line that yaml-cpp reads as a directive or a document marker.
bool startsSpecialLine(std::string_view s, std::size_t lineStart) {
  if (s[lineStart] == '%') return true;
  if (s.size() - lineStart < 3) return false;
  const std::string_view head = s.substr(lineStart, 3);
  return (head == "---" || head == "...") && isBlankOrEnd(s, lineStart + 3);
}

// Calls `handler` for each of `events`, as yaml-cpp's parser would have.
void replay(const Events& events, std::string_view section, YAML::EventHandler& handler) {
  static const std::string kPlainTag = "?", kNonPlainTag = "!";
  std::string value;
  for (const Event& e : events.list) {
    YAML::Mark mark;
    mark.pos = e.pos;
    mark.line = e.line;
    mark.column = e.column;
    const auto style = e.flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block;
    switch (e.kind) {
      case Event::Kind::DocumentStart: handler.OnDocumentStart(mark); break;
      case Event::Kind::DocumentEnd: handler.OnDocumentEnd(); break;
      case Event::Kind::MapStart: handler.OnMapStart(mark, kPlainTag, YAML::NullAnchor, style); break;
      case Event::Kind::MapEnd: handler.OnMapEnd(); break;
      case Event::Kind::SeqStart: handler.OnSequenceStart(mark, kPlainTag, YAML::NullAnchor, style); break;
      case Event::Kind::SeqEnd: handler.OnSequenceEnd(); break;
      case Event::Kind::Null: handler.OnNull(mark, YAML::NullAnchor); break;
      case Event::Kind::Scalar: {
        const char* base = e.inArena ? events.arena.data() : section.data();
        value.assign(base + e.offset, e.length);
        handler.OnScalar(mark, e.plain ? kPlainTag : kNonPlainTag, YAML::NullAnchor, value);
        break;
      }
    }
  }
}

}  // namespace

Streamed stream(std::string_view section, Events& scratch, YAML::EventHandler& handler, std::size_t chunkEvents) {
  scratch.clear();
  if (section.size() > static_cast<std::size_t>(std::numeric_limits<int>::max() / 2) || !plainBytes(section)) return {};
  ChunkedHandOver chunks(handler, chunkEvents);
  try {
    Scanner(section, scratch, chunks).document();
  } catch (const Bail&) {
    scratch.clear();
    return {Streamed::Outcome::BailedOut, chunks.handlerCalled()};
  }
  if (scratch.list.empty() && !chunks.handlerCalled()) return {Streamed::Outcome::NoDocument, false};
  chunks.offer(scratch, section, true);
  chunks.rethrowHandlerError();
  return {Streamed::Outcome::Document, true};
}

void ChunkedHandOver::offer(Events& events, std::string_view section, bool last) {
  if (events.list.size() < chunkEvents_ && !last) return;
  if (!handlerError_) {
    handlerCalled_ = true;
    try {
      replay(events, section, handler_);
    } catch (...) {
      handlerError_ = std::current_exception();
    }
  }
  events.clear();
}

void ChunkedHandOver::rethrowHandlerError() const {
  if (handlerError_) std::rethrow_exception(handlerError_);
}

// --- lines ---

void Scanner::enterLine(std::size_t lineStart) {
  const std::size_t n = s_.size();
  for (;;) {
    lineStart_ = lineStart;
    std::size_t p = lineStart;
    while (p < n && s_[p] == ' ') ++p;
    if (p < n && s_[p] == '#') {
      const void* nl = std::memchr(s_.data() + p, '\n', n - p);
      p = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data()) : n;
      if (p == n) {  // a comment ends the section without a line break
        eof_ = eofMidLine_ = true;
        first_ = n;
        return;
      }
    }
    if (p >= n) {
      eof_ = true;
      eofMidLine_ = p > lineStart;
      first_ = n;
      return;
    }
    if (s_[p] == '\n') {
      lineStart = p + 1;
      ++line_;
      continue;
    }
    first_ = p;
    if (p == lineStart && startsSpecialLine(s_, p)) bail();
    return;
  }
}

void Scanner::toNextContentLine(std::size_t p) {
  const std::size_t n = s_.size();
  while (p < n && s_[p] == ' ') ++p;
  if (p < n && s_[p] == '#') {
    const void* nl = std::memchr(s_.data() + p, '\n', n - p);
    p = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data()) : n;
  }
  if (p >= n) {
    eof_ = eofMidLine_ = true;
    first_ = n;
    return;
  }
  if (s_[p] != '\n') bail();  // more than one node on the line
  ++line_;
  enterLine(p + 1);
}

// --- events ---

Event& Scanner::push(Event::Kind kind, std::size_t pos) {
  Event& e = out_.list.emplace_back();
  e.kind = kind;
  e.pos = static_cast<int>(pos);
  e.line = line_;
  e.column = static_cast<int>(pos - lineStart_);
  return e;
}

void Scanner::pushEnd(Event::Kind kind) { out_.list.emplace_back().kind = kind; }

// yaml-cpp gives a missing node (after "key:" or "-") the mark of the token
// that follows: the next key or entry, or the end of a block, which it
// marks where the next token starts. At the end of the section that is the
// end of the text, column 0, only when the text ends with a line break
// (otherwise the column depends on which indents yaml-cpp pops where).
void Scanner::pushMissingNode() {
  if (eof_ && eofMidLine_) bail();
  push(Event::Kind::Null, first_);
}

void Scanner::pushScalar(std::size_t pos, std::size_t begin, std::size_t end, bool plain) {
  const std::string_view v = s_.substr(begin, end - begin);
  if (plain && (v == "~" || v == "null" || v == "Null" || v == "NULL")) {  // yaml-cpp's IsNullString
    push(Event::Kind::Null, pos);
    return;
  }
  Event& e = push(Event::Kind::Scalar, pos);
  e.plain = plain;
  e.offset = static_cast<std::uint32_t>(begin);
  e.length = static_cast<std::uint32_t>(end - begin);
}

void Scanner::pushArenaScalar(std::size_t pos, const std::string& value) {
  Event& e = push(Event::Kind::Scalar, pos);
  e.inArena = true;
  e.offset = static_cast<std::uint32_t>(out_.arena.size());
  e.length = static_cast<std::uint32_t>(value.size());
  out_.arena += value;
}

Scanner::Nest::Nest(Scanner& scanner) : scanner_(scanner) {
  // yaml-cpp's DepthGuard stops at 500 nested nodes; stay well below.
  if (++scanner_.depth_ > 200) bail();
}

// --- block structure ---

void Scanner::document() {
  enterLine(0);
  if (eof_) return;  // nothing but blank lines and comments: no document, no events
  push(Event::Kind::DocumentStart, first_);
  blockNode(-1);
  if (!eof_) bail();  // content after the root node: another document, or an error
  pushEnd(Event::Kind::DocumentEnd);
}

void Scanner::blockNode(int parentIndent) {
  if (isEntry(first_))
    blockSequence(indent());
  else
    inlineNode(first_, Place::OwnLine, parentIndent);
}

void Scanner::inlineNode(std::size_t p, Place place, int topIndent) {
  const char c = s_[p];
  if (c == '-' && isBlankOrEnd(s_, p + 1)) bail();  // "- - x", "key: - x"
  if (c == '|' || c == '>') {
    if (place == Place::OwnLine) bail();  // its indentation would depend on a discarded simple key
    blockScalar(p, topIndent);
    return;
  }
  if (place != Place::AfterValue) {  // "key: v" here opens a map ("a: b: c" is an error)
    const std::size_t mapStart = out_.list.size();
    push(Event::Kind::MapStart, p);
    const std::size_t afterColon = mapKey(p);
    if (afterColon != npos) {
      blockMap(static_cast<int>(p - lineStart_), afterColon);
      return;
    }
    out_.list.resize(mapStart);
  }
  toNextContentLine(scalarNode(p));
}

// The entry after "-" or the value after "key:" (`afterIndicator` follows
// the indicator): on the same line, or on the lines below.
void Scanner::nodeAfterIndicator(std::size_t afterIndicator, int column, bool mapValue) {
  std::size_t q = afterIndicator;
  while (q < s_.size() && s_[q] == ' ') ++q;
  if (q >= s_.size() || s_[q] == '\n' || s_[q] == '#')
    nodeOnNextLines(q, column, mapValue);
  else
    inlineNode(q, mapValue ? Place::AfterValue : Place::AfterEntry, column);
}

// The rest of the entry or value when nothing follows "-" or "key:" on its
// line: a node on the lines below, more indented; a sequence at the key's
// own column (yaml-cpp lets a block sequence sit at its parent key's
// indentation); or a missing node.
void Scanner::nodeOnNextLines(std::size_t afterIndicator, int column, bool mapValue) {
  toNextContentLine(afterIndicator);
  if (!eof_ && indent() > column)
    blockNode(column);
  else if (mapValue && !eof_ && indent() == column && isEntry(first_))
    blockSequence(column);
  else
    pushMissingNode();
}

// The entry at the current line's '-' (at `column`) and the entries after it.
void Scanner::blockSequence(int column) {
  Nest nest(*this);
  push(Event::Kind::SeqStart, first_);
  for (;;) {
    atSafePoint();
    nodeAfterIndicator(first_ + 1, column, false);
    if (eof_ || indent() < column) break;
    if (indent() > column) bail();
    if (!isEntry(first_)) break;  // the parent map's next key, at the same column
  }
  pushEnd(Event::Kind::SeqEnd);
}

// The map whose MapStart and first key are emitted; `afterColon` follows
// that key's ':'.
void Scanner::blockMap(int column, std::size_t afterColon) {
  Nest nest(*this);
  for (;;) {
    atSafePoint();
    nodeAfterIndicator(afterColon, column, true);
    if (eof_ || indent() < column) break;
    if (indent() > column) bail();
    afterColon = mapKey(first_);
    if (afterColon == npos) bail();  // "- x" or a scalar where the next key belongs
  }
  pushEnd(Event::Kind::MapEnd);
}

}  // namespace gpuguard::yaml::detail::fastpath
