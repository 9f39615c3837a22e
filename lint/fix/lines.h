// Internals of --fix (lint/fix/fix.h): the text as lines, where a node starts on
// its line, YAML scalars as text, and the line edits a plan is made of.
// Shared by the planner (planner.cpp) and the applier (fix.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::lint::fix_detail {

// The text as lines. Line n (1-based) is line(n) without its line break.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
    count_ = starts_.back() == text.size() ? starts_.size() - 1 : starts_.size();
    const std::size_t nl = text.find('\n');
    eol_ = nl != std::string_view::npos && nl > 0 && text[nl - 1] == '\r' ? "\r\n" : "\n";
  }

  std::size_t count() const { return count_; }
  // The line with its break ("\n", "\r\n" or nothing at the end of the text).
  std::string_view full(std::size_t n) const {
    const std::size_t b = starts_[n - 1];
    const std::size_t e = n < starts_.size() ? starts_[n] : text_.size();
    return text_.substr(b, e - b);
  }
  std::string_view line(std::size_t n) const {
    std::string_view s = full(n);
    if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    return s;
  }
  std::string_view lineBreak(std::size_t n) const { return full(n).substr(line(n).size()); }
  // The file's line break, for new lines.
  const std::string& eol() const { return eol_; }
  bool valid(int n) const { return n >= 1 && static_cast<std::size_t>(n) <= count_; }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
  std::size_t count_ = 0;
  std::string eol_;
};

// The byte index of a 1-based column counted in code points, if on the line.
std::optional<std::size_t> byteIndex(std::string_view line, int column);
bool allSpaces(std::string_view s);
std::size_t leadingSpaces(std::string_view s);
bool commentOnly(std::string_view line);


// The part of a line before a key or value that starts a block entry:
// only spaces (a mapping key), or spaces, '-' and spaces (the first key of
// a sequence item). Returns the indentation of the key / of the dash.
struct Prefix {
  enum Kind { Indent, Dash, Other } kind = Other;
  std::size_t indent = 0;  // spaces before the key, or before the dash
};
Prefix prefixOf(std::string_view line, int column);

// A scalar as YAML text: a string plain when it reads back as the same
// string (nvidia.com/gpu, 500m, Exists), quoted when YAML 1.1 would read it
// as something else (yes, 1, 0x10, ~) or it holds other characters; numbers
// and booleans as JSON writes them.
// JSON text is YAML (a double-quoted string, a number); bytes that are not
// UTF-8 become U+FFFD instead of an exception.
std::string jsonText(const nlohmann::ordered_json& v);
std::string yamlScalar(const nlohmann::ordered_json& v);
std::string yamlScalar(const std::string& s);


// Anchors (&a), aliases (*a) and merge keys (<<:) where a node starts (at
// the start of a line, after "key: ", "- ", '[', '{' or ','), outside
// comments, quoted text and block scalars (a shell heredoc "<<EOF" or
// "a && b" in a script is not one). Conservative: a false alarm only means
// "not fixed".
bool usesAnchors(const Lines& lines, std::size_t first, std::size_t last);

struct Edit {
  std::size_t line = 0;    // 1-based: insert before it, or the first line replaced
  std::size_t remove = 0;  // lines replaced
  std::vector<std::string> lines;  // new lines, without line breaks
};

}  // namespace gpuguard::lint::fix_detail
