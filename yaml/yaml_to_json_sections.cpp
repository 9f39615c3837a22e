// Stages 2 and 3 of yaml_to_json.cpp's pipeline: the stream cut into
// sections like apimachinery's YAMLReader, and the pre-scan of each section
// (class Prescan) before yaml-cpp sees it.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail {
namespace {

// ---------------------------------------------------------------------------
// Pre-scan (see the file comment, step 3).

struct PrescanFailure {
  Position position;
  std::string message;
};

class Prescan {
 public:
  Prescan(std::string_view text, const Limits& limits) : s_(text), lim_(limits) {}

  void reset() {
    mode_ = Mode::Normal;
    owner_ = -1;
    flowDepth_ = 0;
  }

  // One line [b, e) (without its '\n'), line number `line`. Throws
  // PrescanFailure.
  void feedLine(std::size_t b, std::size_t e, int line) {
    line_ = line;
    lb_ = b;
    std::size_t le = e;
    if (le > b && s_[le - 1] == '\r') --le;
    std::size_t ind = b;
    while (ind < le && s_[ind] == ' ') ++ind;
    std::size_t fc = ind;
    while (fc < le && (s_[fc] == ' ' || s_[fc] == '\t')) ++fc;
    const bool blank = fc >= le;
    const int indent = static_cast<int>(ind - b);

    switch (mode_) {
      case Mode::BlockScalar:
        if (blank) return checkScalar(bsStart_, le, bsPos_);
        if (bsIndent_ < 0 ? indent > bsOwner_ : indent >= bsIndent_) {
          if (bsIndent_ < 0) bsIndent_ = indent;
          return checkScalar(bsStart_, le, bsPos_);
        }
        mode_ = Mode::Normal;
        break;
      case Mode::PlainContinuation:
        if (blank) return;
        if (indent > plainOwner_ && s_[fc] != '#') return checkScalar(plainStart_, le, plainPos_);
        mode_ = Mode::Normal;
        break;
      case Mode::Quoted: {
        std::size_t q = scanQuoted(b, le);
        if (q == npos) return checkScalar(quoteStart_, le, quotePos_);
        mode_ = Mode::Normal;
        checkScalar(quoteStart_, q, quotePos_);
        if (quoteInFlow_) return flow(q, le);
        return afterNode(q, le, quoteColumn_);
      }
      case Mode::Normal:
        break;
    }
    if (flowDepth_ > 0) return flow(b, le);
    if (blank) return;
    char c = s_[fc];
    if (c == '#') return;
    if (fc == b && c == '%') return;  // directive
    if (fc == b && le - b >= 3 && s_.compare(b, 3, "...") == 0 && (le - b == 3 || s_[b + 3] == ' ' || s_[b + 3] == '\t'))
      return;  // document end marker
    block(fc, le);
  }

 private:
  enum class Mode { Normal, BlockScalar, PlainContinuation, Quoted };

  static bool isBlank(char c) { return c == ' ' || c == '\t'; }
  bool blankOrEnd(std::size_t p, std::size_t le) const { return p >= le || isBlank(s_[p]); }
  int column(std::size_t p) const { return static_cast<int>(p - lb_); }
  Position positionOf(std::size_t p) const { return {line_, 1 + countChars(s_.substr(lb_, p - lb_))}; }
  // Where a scalar or collection starts, its column counted only if it is
  // reported: counting at every quote of a long line (a JSON array on one
  // line) took time quadratic in the line.
  struct Mark {
    int line = 0;
    std::size_t lineBase = 0, offset = 0;
  };
  Mark markOf(std::size_t p) const { return {line_, lb_, p}; }
  Position positionOf(const Mark& m) const {
    return {m.line, 1 + countChars(s_.substr(m.lineBase, m.offset - m.lineBase))};
  }

  [[noreturn]] void fail(Position at, std::string message) const { throw PrescanFailure{at, std::move(message)}; }

  void checkScalar(std::size_t start, std::size_t end, const Mark& at) const {
    if (end - start > lim_.maxScalarBytes)
      fail(positionOf(at), "scalar is larger than the limit of " + std::to_string(lim_.maxScalarBytes) + " bytes");
  }
  void checkFlow(std::size_t end) const {
    if (end - flowStart_ > lim_.maxFlowBytes)
      fail(positionOf(flowPos_), "flow collection ([...] or {...}) is larger than the limit of " + std::to_string(lim_.maxFlowBytes) +
                         " bytes");
  }

  // Inside a quoted scalar (quote_): the offset just past the closing
  // quote, or npos if it continues on the next line.
  std::size_t scanQuoted(std::size_t p, std::size_t le) const {
    if (quote_ == '"') {
      for (; p < le; ++p) {
        if (s_[p] == '\\') ++p;
        else if (s_[p] == '"') return p + 1;
      }
    } else {
      for (; p < le; ++p) {
        if (s_[p] != '\'') continue;
        if (p + 1 < le && s_[p + 1] == '\'') ++p;
        else return p + 1;
      }
    }
    return npos;
  }

  void startQuote(std::size_t p, bool inFlow) {
    quote_ = s_[p];
    quoteStart_ = p;
    quotePos_ = markOf(p);
    quoteColumn_ = column(p);
    quoteInFlow_ = inFlow;
  }

  // Block context, at the start of a node (line start, after "- ", "? ",
  // ": " or node properties).
  void block(std::size_t p, std::size_t le) {
    for (;;) {
      while (p < le && isBlank(s_[p])) ++p;
      if (p >= le) return;
      const char c = s_[p];
      if ((c == '-' || c == '?' || c == ':') && blankOrEnd(p + 1, le)) {
        if (c != ':') owner_ = column(p);
        ++p;
        continue;
      }
      switch (c) {
        case '#':
          return;
        case '&':
        case '!':
          while (p < le && !isBlank(s_[p])) ++p;
          continue;
        case '*': {
          int col = column(p);
          while (p < le && !isBlank(s_[p])) ++p;
          return afterNode(p, le, col);
        }
        case '[':
        case '{':
          flowColumn_ = column(p);
          return flow(p, le);
        case '"':
        case '\'': {
          startQuote(p, false);
          std::size_t q = scanQuoted(p + 1, le);
          if (q == npos) {
            mode_ = Mode::Quoted;
            return checkScalar(p, le, quotePos_);
          }
          checkScalar(p, q, quotePos_);
          return afterNode(q, le, quoteColumn_);
        }
        case '|':
        case '>': {
          mode_ = Mode::BlockScalar;
          bsOwner_ = owner_;
          bsIndent_ = -1;
          bsStart_ = p;
          bsPos_ = markOf(p);
          for (std::size_t h = p + 1; h < le && !isBlank(s_[h]) && s_[h] != '#'; ++h)
            if (s_[h] >= '1' && s_[h] <= '9') bsIndent_ = (owner_ >= 0 ? owner_ : 0) + (s_[h] - '0');
          return;
        }
        default:
          break;
      }
      // A plain scalar: a key if ": " follows on this line, a value otherwise
      // (which may continue on more-indented lines).
      const std::size_t start = p;
      for (;; ++p) {
        if (p >= le) {
          mode_ = Mode::PlainContinuation;
          plainOwner_ = owner_;
          plainStart_ = start;
          plainPos_ = markOf(start);
          return checkScalar(start, le, plainPos_);
        }
        const char d = s_[p];
        if (d == ':' && blankOrEnd(p + 1, le)) {
          owner_ = column(start);
          ++p;
          break;
        }
        if (d == '#' && isBlank(s_[p - 1])) return;
      }
    }
  }

  // After a quoted scalar, an alias or a flow collection in block context:
  // ": " makes it a key and a value may follow.
  void afterNode(std::size_t p, std::size_t le, int startColumn) {
    while (p < le && isBlank(s_[p])) ++p;
    if (p < le && s_[p] == ':' && blankOrEnd(p + 1, le)) {
      owner_ = startColumn;
      block(p + 1, le);
    }
  }

  // Flow context ([...] / {...}), possibly spanning lines.
  void flow(std::size_t p, std::size_t le) {
    bool afterBlank = true;
    while (p < le) {
      const char c = s_[p];
      switch (c) {
        case ' ':
        case '\t':
          afterBlank = true;
          ++p;
          continue;
        case '#':
          if (afterBlank) return checkFlow(le);
          break;
        case '[':
        case '{':
          if (flowDepth_ == 0) {
            flowStart_ = p;
            flowPos_ = markOf(p);
          }
          if (static_cast<std::size_t>(++flowDepth_) > lim_.maxDepth)
            fail(positionOf(p), "flow collections nested deeper than the limit of " + std::to_string(lim_.maxDepth) +
                                    " levels");
          lastSignificant_ = c;
          afterBlank = false;
          ++p;
          continue;
        case ']':
        case '}':
          lastSignificant_ = c;
          afterBlank = false;
          ++p;
          if (flowDepth_ > 0 && --flowDepth_ == 0) {
            checkFlow(p);
            return afterNode(p, le, flowColumn_);
          }
          continue;
        case '"':
        case '\'':
          if (std::strchr("[{,:?", lastSignificant_) != nullptr) {
            startQuote(p, true);
            std::size_t q = scanQuoted(p + 1, le);
            if (q == npos) {
              mode_ = Mode::Quoted;
              return checkScalar(p, le, quotePos_);
            }
            checkScalar(p, q, quotePos_);
            lastSignificant_ = c;
            afterBlank = false;
            p = q;
            continue;
          }
          break;
        default:
          break;
      }
      lastSignificant_ = c;
      afterBlank = false;
      ++p;
    }
    checkFlow(le);
  }

  std::string_view s_;
  const Limits& lim_;
  int line_ = 1;
  std::size_t lb_ = 0;  // current line begin
  Mode mode_ = Mode::Normal;
  int owner_ = -1;  // column of the node that owns what follows (key, "-", "?")
  // block scalar
  int bsOwner_ = -1, bsIndent_ = -1;
  std::size_t bsStart_ = 0;
  Mark bsPos_;
  // plain multi-line scalar
  int plainOwner_ = -1;
  std::size_t plainStart_ = 0;
  Mark plainPos_;
  // quoted scalar
  char quote_ = '"';
  std::size_t quoteStart_ = 0;
  Mark quotePos_;
  int quoteColumn_ = 0;
  bool quoteInFlow_ = false;
  // flow collection
  int flowDepth_ = 0;
  std::size_t flowStart_ = 0;
  Mark flowPos_;
  int flowColumn_ = 0;
  char lastSignificant_ = '[';
};

bool isGoSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Whether a line holds something (not blank, not only a comment).
bool hasContent(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t\r");
  return first != std::string_view::npos && line[first] != '#';
}

// The first line with content of a section, as go-yaml reads the section
// alone: a directive ("%YAML 1.1") must be followed by "---" in the same
// document, and kubectl's YAMLReader cut the stream at that "---"; a
// document end marker ("...") cannot start a document. kubectl refuses
// both and stops there.
std::optional<ParseError> firstContentProblem(std::string_view line, int lineNumber) {
  const std::string_view after = "; kubectl refuses it and stops there, applying none of the documents after it";
  if (line.starts_with('%'))
    return ParseError{{lineNumber, 1}, "did not find expected <document start>: a %YAML or %TAG directive needs \"---\" after "
                                       "it in the same document, but kubectl cuts the stream at every \"---\" line, so it "
                                       "reads the directive as a document of its own" + std::string(after) +
                                       " (remove the directive)"};
  if (line.starts_with("...") && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r'))
    return ParseError{{lineNumber, 1}, "did not find expected node content: the document end marker \"...\" with no "
                                       "document before it since the last \"---\"" + std::string(after) +
                                       " (remove the \"...\" line)"};
  return std::nullopt;
}

}  // namespace

std::string_view trimGoSpace(std::string_view s) {
  while (!s.empty() && isGoSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isGoSpace(s.back())) s.remove_suffix(1);
  // U+0085 and U+00A0 are unicode.IsSpace too.
  while (s.size() >= 2 && s[0] == '\xC2' && (s[1] == '\x85' || s[1] == '\xA0')) s.remove_prefix(2);
  while (s.size() >= 2 && s[s.size() - 2] == '\xC2' && (s.back() == '\x85' || s.back() == '\xA0')) s.remove_suffix(2);
  return s;
}

// Splits like apimachinery's YAMLReader and pre-scans each section. A
// section with a problem carries its error, and splitting goes on at the
// next separator, so the sections after it are still parsed. An invalid
// separator line ("--- !tag") is a section of its own holding the error:
// the documents on both sides of it are parsed.
std::vector<Section> splitSections(std::string_view s, const Limits& limits, int firstLine) {
  std::vector<Section> sections;
  TextProblem bad = firstTextProblem(s);
  Prescan scan(s, limits);
  Section cur;
  cur.firstLine = firstLine;
  bool curEmpty = true;
  bool curHasContent = false;
  std::size_t pos = 0;
  int line = firstLine;
  auto close = [&](std::size_t end) {
    cur.end = end;
    cur.ascii = allAscii(s.substr(cur.begin, cur.end - cur.begin));
    sections.push_back(std::move(cur));
  };
  auto open = [&](std::size_t begin, int startLine) {
    cur = Section{};
    cur.begin = begin;
    cur.firstLine = startLine;
    curEmpty = true;
    curHasContent = false;
    scan.reset();
  };
  while (pos < s.size()) {
    const char* nl = static_cast<const char*>(std::memchr(s.data() + pos, '\n', s.size() - pos));
    const std::size_t lineEnd = nl ? static_cast<std::size_t>(nl - s.data()) : s.size();
    const std::size_t next = nl ? lineEnd + 1 : s.size();
    std::optional<ParseError> lineProblem;
    if (bad.offset < next) {
      lineProblem = ParseError{{line, 1 + countChars(s.substr(pos, bad.offset - pos))}, bad.message};
      bad = firstTextProblem(s.substr(next));
      if (bad.offset != npos) bad.offset += next;
    }
    if (lineEnd - pos >= 3 && s.compare(pos, 3, "---") == 0) {
      const std::string_view rest = trimGoSpace(s.substr(pos + 3, lineEnd - pos - 3));
      if (!curEmpty) close(pos);
      if (!lineProblem && !rest.empty() && rest[0] != '#') {
        lineProblem = ParseError{{line, 1 + countChars(s.substr(pos, static_cast<std::size_t>(rest.data() - s.data()) - pos))},
                                 "invalid document separator \"" + std::string(s.substr(pos, lineEnd - pos)) +
                                     "\": only blanks or a comment may follow \"---\" on a separator line (kubectl: \"invalid Yaml "
                                     "document separator: " + std::string(rest) + "\"; it stops there and does not apply "
                                     "the document above the line either)"};
      }
      if (lineProblem) {
        open(pos, line);
        cur.error = std::move(lineProblem);
        cur.separatorAt = pos;
        cur.separatorLine = line;
        close(next);
      }
      open(next, line + 1);
      cur.separatorAt = pos;
      cur.separatorLine = line;
    } else {
      curEmpty = false;
      if (!curHasContent && hasContent(s.substr(pos, lineEnd - pos))) {
        curHasContent = true;
        if (!lineProblem) lineProblem = firstContentProblem(s.substr(pos, lineEnd - pos), line);
      }
      if (lineProblem && !cur.error) cur.error = std::move(lineProblem);
      if (!cur.error) {
        try {
          scan.feedLine(pos, lineEnd, line);
        } catch (const PrescanFailure& f) {
          cur.error = ParseError{f.position, f.message};
        }
      }
    }
    pos = next;
    ++line;
  }
  if (!curEmpty) close(s.size());
  return sections;
}

std::optional<ParseError> flowSequenceDocument(std::string_view s, const Section& section) {
  int line = section.firstLine;
  std::size_t lineStart = section.begin;
  for (std::size_t i = section.begin; i < section.end; ++i) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '#' || (c == '%' && i == lineStart)) {  // a comment, a directive: to the end of the line
      while (i + 1 < section.end && s[i + 1] != '\n') ++i;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      if (c != '[') return std::nullopt;
      const int column = countChars(s.substr(lineStart, i - lineStart)) + 1;
      return ParseError{{line, column},
                        "the document is a list ([...], a JSON array), not a Kubernetes object: kubectl refuses it "
                        "(error validating data: invalid object to validate); write the objects one after another "
                        "(a JSON stream, or YAML documents separated by ---) or as the items of a kind: List"};
    }
  }
  return std::nullopt;
}

}  // namespace gpuguard::yaml::detail
