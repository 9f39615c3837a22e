// yaml_fast_path.h: scalars (plain, quoted, literal and folded) and flow
// collections, each as yaml-cpp 0.7 scans it (scantoken.cpp, scanscalar.cpp,
// exp.h), for the cases that fit on one line (block scalars excepted).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "yaml/yaml_fast_path_scanner.h"

namespace gpuguard::yaml::detail::fastpath {

namespace {

constexpr std::size_t npos = std::string_view::npos;

bool isOneOf(char c, const char* set) { return c != '\0' && std::strchr(set, c) != nullptr; }

// The UTF-8 bytes of code point `v`, as yaml-cpp's Exp::Escape writes them.
void appendUtf8(std::string& out, std::uint32_t v) {
  if (v <= 0x7F) {
    out += static_cast<char>(v);
  } else if (v <= 0x7FF) {
    out += static_cast<char>(0xC0 + (v >> 6));
    out += static_cast<char>(0x80 + (v & 0x3F));
  } else if (v <= 0xFFFF) {
    out += static_cast<char>(0xE0 + (v >> 12));
    out += static_cast<char>(0x80 + ((v >> 6) & 0x3F));
    out += static_cast<char>(0x80 + (v & 0x3F));
  } else {
    out += static_cast<char>(0xF0 + (v >> 18));
    out += static_cast<char>(0x80 + ((v >> 12) & 0x3F));
    out += static_cast<char>(0x80 + ((v >> 6) & 0x3F));
    out += static_cast<char>(0x80 + (v & 0x3F));
  }
}

// "\xNN", "\uNNNN", "\UNNNNNNNN": yaml-cpp refuses a non-hex digit, a
// surrogate and anything above U+10FFFF.
void appendHexEscape(std::string_view digits, std::string& out) {
  std::uint32_t v = 0;
  for (char ch : digits) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else bail();
    v = (v << 4) + static_cast<std::uint32_t>(d);
  }
  if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) bail();
  appendUtf8(out, v);
}

// The escape after a backslash in a double-quoted scalar (yaml-cpp's
// Exp::Escape); returns how many bytes after the backslash it used.
std::size_t appendEscape(std::string_view s, std::size_t i, std::string& out) {
  const char ch = i < s.size() ? s[i] : '\0';
  switch (ch) {
    case '0': out += '\0'; return 1;
    case 'a': out += '\x07'; return 1;
    case 'b': out += '\x08'; return 1;
    case 't': out += '\x09'; return 1;
    case 'n': out += '\x0A'; return 1;
    case 'v': out += '\x0B'; return 1;
    case 'f': out += '\x0C'; return 1;
    case 'r': out += '\x0D'; return 1;
    case 'e': out += '\x1B'; return 1;
    case ' ': case '"': case '\'': case '\\': case '/': out += ch; return 1;
    case 'N': out += '\x85'; return 1;  // one byte, as yaml-cpp writes it
    case '_': out += '\xA0'; return 1;
    case 'L': out += "\xE2\x80\xA8"; return 1;
    case 'P': out += "\xE2\x80\xA9"; return 1;
    default: break;
  }
  const std::size_t width = ch == 'x' ? 2 : ch == 'u' ? 4 : ch == 'U' ? 8 : 0;
  if (width == 0 || i + 1 + width > s.size()) bail();  // unknown escape, or "\" at the end of the line
  appendHexEscape(s.substr(i + 1, width), out);
  return 1 + width;
}

}  // namespace

// --- plain scalars ---

// yaml-cpp's Exp::PlainScalar: what a plain scalar may start with in block context.
bool Scanner::canStartPlainInBlock(std::string_view s, std::size_t p) {
  const char c = s[p];
  if (c == ' ' || c == '\n' || isOneOf(c, ",[]{}#&*!|>'\"%@`")) return false;
  return !((c == '-' || c == '?' || c == ':') && isBlankOrEnd(s, p + 1));
}

// yaml-cpp's Exp::ScanScalarEnd: ':' before a blank or the end, or a blank
// before '#'. Only the first line: what follows a line break is the
// caller's to judge.
Scanner::PlainEnd Scanner::scanPlainInBlock(std::size_t p) const {
  const std::size_t n = s_.size();
  PlainEnd r{n, n, false};
  for (std::size_t j = p; j < n; ++j) {
    const char c = s_[j];
    if (c == '\n') {
      r.stop = j;
      break;
    }
    if (c == ':' && isBlankOrEnd(s_, j + 1)) {
      r.stop = j;
      r.atColon = true;
      break;
    }
    if (c == '#' && s_[j - 1] == ' ') {  // j > p: a plain scalar does not start with '#'
      r.stop = j - 1;
      break;
    }
  }
  r.end = r.stop;
  while (r.end > p && s_[r.end - 1] == ' ') --r.end;  // trimTrailingSpaces
  return r;
}

// --- quoted scalars ---

// The closing quote of the quoted scalar at p, on its line, or npos.
static std::size_t closingQuote(std::string_view s, std::size_t p) {
  const char quote = s[p];
  for (std::size_t i = p + 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') return npos;
    if (quote == '\'' && c == '\'') {
      if (i + 1 < s.size() && s[i + 1] == '\'') {
        ++i;
        continue;
      }
      return i;
    }
    if (quote == '"' && c == '\\') {
      ++i;
      continue;
    }
    if (quote == '"' && c == '"') return i;
  }
  return npos;
}

std::size_t Scanner::quotedScalar(std::size_t p) {
  const std::size_t close = closingQuote(s_, p);
  if (close == npos) bail();  // runs past the line (or the text)
  const std::string_view body = s_.substr(p + 1, close - p - 1);
  const char escape = s_[p] == '\'' ? '\'' : '\\';
  if (body.find(escape) == npos) {
    pushScalar(p, p + 1, close, false);
    return close + 1;
  }
  value_.clear();
  for (std::size_t i = p + 1; i < close; ++i) {
    if (s_[i] != escape) {
      value_ += s_[i];
    } else if (escape == '\'') {
      value_ += '\'';  // "''"
      ++i;
    } else {
      if (s_[i + 1] == '\n') bail();  // an escaped line break: multi-line
      i += appendEscape(s_, i + 1, value_);
      if (i >= close) bail();  // an escape that would swallow the closing quote
    }
  }
  pushArenaScalar(p, value_);
  return close + 1;
}

// --- keys and single-line nodes ---

std::size_t Scanner::mapKey(std::size_t p) {
  const char c = s_[p];
  if (c == '"' || c == '\'') {
    const std::size_t close = closingQuote(s_, p);
    if (close == npos || at(close + 1) != ':' || !isBlankOrEnd(s_, close + 2)) return npos;
    if (close - p > 1000) bail();  // yaml-cpp: no simple key longer than 1024 characters
    quotedScalar(p);
    return close + 2;
  }
  if (!canStartPlainInBlock(s_, p)) return npos;
  const PlainEnd e = scanPlainInBlock(p);
  if (!e.atColon) return npos;
  if (e.stop - p > 1000) bail();
  pushScalar(p, p, e.end, true);
  return e.stop + 1;
}

std::size_t Scanner::scalarNode(std::size_t p) {
  const char c = s_[p];
  if (c == '"' || c == '\'') return quotedScalar(p);
  if (c == '[' || c == '{') return flowCollection(p);
  if (!canStartPlainInBlock(s_, p)) bail();  // anchors, aliases, tags, '?', ...
  const PlainEnd e = scanPlainInBlock(p);
  if (e.atColon) bail();
  pushScalar(p, p, e.end, true);
  return e.stop;
}

// --- block scalars ---

void Scanner::blockScalar(std::size_t p, int topIndent) {
  BlockScalar b;
  b.folded = s_[p] == '>';
  std::size_t q = p + 1;
  // yaml-cpp's Exp::Chomp: an indicator and a digit in either order, or one of them.
  const auto isIndicator = [](char c) { return c == '+' || c == '-'; };
  const auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
  const std::size_t headerLength = (isIndicator(at(q)) && isDigit(at(q + 1))) || (isDigit(at(q)) && isIndicator(at(q + 1))) ? 2
                                   : isIndicator(at(q)) || isDigit(at(q))                                                  ? 1
                                                                                                                          : 0;
  for (std::size_t k = 0; k < headerLength; ++k, ++q) {
    const char ch = s_[q];
    if (ch == '+') b.chomp = BlockScalar::Keep;
    else if (ch == '-') b.chomp = BlockScalar::Strip;
    else if (ch == '0') bail();  // yaml-cpp: "cannot set zero indentation"
    else {
      b.indent = ch - '0';
      b.detectIndent = false;
    }
  }
  while (at(q) == ' ') ++q;
  if (at(q) == '#')
    while (q < s_.size() && s_[q] != '\n') ++q;
  if (q < s_.size() && s_[q] != '\n') bail();
  if (topIndent >= 0) b.indent += topIndent;
  const std::size_t mark = p;
  std::size_t lineStart = lineStart_;
  int line = line_;
  q = blockScalarText(q, b, lineStart, line);
  pushArenaScalar(mark, value_);
  line_ = line;
  if (q >= s_.size()) {
    lineStart_ = lineStart;
    eof_ = true;
    eofMidLine_ = q > lineStart;
    first_ = s_.size();
  } else {
    enterLine(lineStart);  // q is in the indentation of the line that ended the scalar
  }
}

// yaml-cpp's ScanScalar with the parameters of ScanBlockScalar: the text
// from the header's line break `q` until a non-empty line indented less
// than the block's indentation, folded and chomped. Leaves lineStart/line
// at the line where it stopped and returns the position reached there
// (within that line's indentation, or the end of the text).
std::size_t Scanner::blockScalarText(std::size_t q, BlockScalar& b, std::size_t& lineStart, int& line) {
  const std::size_t n = s_.size();
  std::string& v = value_;
  v.clear();
  bool foundNonEmptyLine = false, pastOpeningBreak = false, emptyLine = false, moreIndented = false;
  int foldedNewlines = 0;
  bool foldedStartedMoreIndented = false;
  while (q < n) {
    // 1. the rest of the line
    const void* nl = std::memchr(s_.data() + q, '\n', n - q);
    const std::size_t lineEnd = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data()) : n;
    if (lineEnd > q) {
      foundNonEmptyLine = pastOpeningBreak = true;
      v.append(s_.data() + q, lineEnd - q);
      q = lineEnd;
    }
    if (q >= n) break;
    // 2. the line break
    lineStart = ++q;
    ++line;
    // 3. the indentation (detected from the first non-empty line)
    while (q < n && s_[q] == ' ' && (static_cast<int>(q - lineStart) < b.indent || (b.detectIndent && !foundNonEmptyLine))) ++q;
    const int column = static_cast<int>(q - lineStart);
    if (b.detectIndent && !foundNonEmptyLine) b.indent = std::max(b.indent, column);
    const bool nextEmptyLine = q < n && s_[q] == '\n';
    const bool nextMoreIndented = q < n && s_[q] == ' ';
    if (b.folded && foldedNewlines == 0 && nextEmptyLine) foldedStartedMoreIndented = moreIndented;
    if (pastOpeningBreak && !b.folded) v += '\n';
    if (pastOpeningBreak && b.folded) {
      if (!emptyLine && !nextEmptyLine && !moreIndented && !nextMoreIndented && column >= b.indent)
        v += ' ';
      else if (nextEmptyLine)
        ++foldedNewlines;
      else
        v += '\n';
      if (!nextEmptyLine && foldedNewlines > 0) {
        v.append(static_cast<std::size_t>(foldedNewlines - 1), '\n');
        if (foldedStartedMoreIndented || nextMoreIndented || !foundNonEmptyLine) v += '\n';
        foldedNewlines = 0;
      }
    }
    emptyLine = nextEmptyLine;
    moreIndented = nextMoreIndented;
    pastOpeningBreak = true;
    if (!emptyLine && column < b.indent) break;
  }
  const std::size_t last = v.find_last_not_of('\n');
  if (b.chomp == BlockScalar::Clip) {
    if (last == npos)
      v.clear();
    else if (last + 1 < v.size())
      v.erase(last + 2);
  } else if (b.chomp == BlockScalar::Strip) {
    v.erase(last == npos ? 0 : last + 1);
  }
  return q;
}

// --- flow collections ---

std::size_t Scanner::skipBlanks(std::size_t i) const {
  while (i < s_.size() && s_[i] == ' ') ++i;
  return i;
}

// "[a, b]" or "{a: b, c: d}", closed on its line, without empty entries.
std::size_t Scanner::flowCollection(std::size_t p) {
  Nest nest(*this);
  const bool sequence = s_[p] == '[';
  const char closer = sequence ? ']' : '}';
  push(sequence ? Event::Kind::SeqStart : Event::Kind::MapStart, p).flow = true;
  std::size_t i = skipBlanks(p + 1);
  while (at(i) != closer) {
    if (!sequence) {
      i = flowKey(i);
      i = skipBlanks(i);
    }
    i = skipBlanks(flowItem(i));
    if (at(i) == closer) break;
    if (at(i) != ',') bail();  // ':' in a sequence (a compact map), another line, ...
    i = skipBlanks(i + 1);
    if (at(i) == closer || at(i) == ',') bail();  // an empty entry
  }
  pushEnd(sequence ? Event::Kind::SeqEnd : Event::Kind::MapEnd);
  return i + 1;
}

// A flow map's key and its ':'; returns the position after the ':'.
std::size_t Scanner::flowKey(std::size_t p) {
  std::size_t colon;
  if (at(p) == '"' || at(p) == '\'') {
    colon = skipBlanks(quotedScalar(p));
    if (at(colon) != ':') bail();  // after a quoted key any ':' is a value indicator (JSON)
  } else {
    colon = flowPlain(p);
    if (at(colon) != ':' || at(colon + 1) != ' ') bail();  // "{a}", "{a:}", "{a:,}"
  }
  if (colon - p > 1000) bail();
  return colon + 1;
}

std::size_t Scanner::flowItem(std::size_t p) {
  const char c = at(p);
  if (c == '[' || c == '{') return flowCollection(p);
  if (c == '"' || c == '\'') return quotedScalar(p);
  const std::size_t stop = flowPlain(p);
  if (at(stop) == ':') bail();  // "[a: b]", "{a: b: c}"
  return stop;
}

// A plain scalar in flow context (yaml-cpp's Exp::PlainScalarInFlow and
// Exp::EndScalarInFlow); emits it and returns where it stops: at ',', ']',
// '}', or ':' before a blank, ',', ']' or '}'. Anything else bails.
std::size_t Scanner::flowPlain(std::size_t p) {
  const char c = at(p);
  if (c == '\0' || c == ' ' || c == '\n' || isOneOf(c, "?,[]{}#&*!|>'\"%@`")) bail();
  if ((c == '-' || c == ':') && (p + 1 >= s_.size() || s_[p + 1] == ' ')) bail();
  std::size_t j = p;
  for (; j < s_.size(); ++j) {
    const char ch = s_[j];
    if (ch == ':' && (j + 1 >= s_.size() || isOneOf(s_[j + 1], " \n,]}"))) break;
    if (isOneOf(ch, "\n,?[]{}") || (ch == ' ' && j + 1 < s_.size() && s_[j + 1] == '#')) break;
  }
  const char stop = at(j);
  if (j == p || (stop != ',' && stop != ']' && stop != '}' && stop != ':')) bail();
  std::size_t end = j;
  while (end > p && s_[end - 1] == ' ') --end;
  pushScalar(p, p, end, true);
  return j;
}

}  // namespace gpuguard::yaml::detail::fastpath
