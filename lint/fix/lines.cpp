// Text helpers of --fix (lines.h).
#include "lint/fix/lines.h"

#include <algorithm>
#include <cstring>

#include "yaml/yaml_to_json.h"

namespace gpuguard::lint::fix_detail {

using nlohmann::json;

std::optional<std::size_t> byteIndex(std::string_view line, int column) {
  std::size_t i = 0;
  for (int c = 1; c < column; ++c) {
    if (i >= line.size()) return std::nullopt;
    ++i;
    while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
  }
  return i <= line.size() ? std::optional<std::size_t>(i) : std::nullopt;
}

bool allSpaces(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' '; });
}

std::size_t leadingSpaces(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

bool commentOnly(std::string_view line) {
  const std::size_t n = line.find_first_not_of(" \t");
  return n != std::string_view::npos && line[n] == '#';
}

Prefix prefixOf(std::string_view line, int column) {
  const std::optional<std::size_t> at = byteIndex(line, column);
  if (!at) return {};
  const std::string_view before = line.substr(0, *at);
  if (allSpaces(before)) return {Prefix::Indent, before.size()};
  const std::size_t n = leadingSpaces(before);
  if (n < before.size() && before[n] == '-' && n + 1 < before.size() && allSpaces(before.substr(n + 1))) {
    return {Prefix::Dash, n};
  }
  return {};
}

std::string jsonText(const nlohmann::ordered_json& v) {
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string yamlScalar(const nlohmann::ordered_json& v) {
  if (!v.is_string()) return jsonText(v);
  const std::string& s = v.get_ref<const std::string&>();
  bool plain = !s.empty() && s[0] != '-' && s[0] != '.';
  for (char c : s) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_' || c == '/');
  }
  if (plain) {
    const yaml::ParseResult back = yaml::parseStream("k: " + s + "\n");
    plain = !back.error && back.documents.size() == 1 && back.documents[0].value == json{{"k", s}};
  }
  return plain ? s : jsonText(v);
}
std::string yamlScalar(const std::string& s) { return yamlScalar(nlohmann::ordered_json(s)); }

bool usesAnchors(const Lines& lines, std::size_t first, std::size_t last) {
  std::size_t blockParent = std::string_view::npos;  // indentation of the line that opened a block scalar
  for (std::size_t n = first; n <= last && n <= lines.count(); ++n) {
    const std::string_view l = lines.line(n);
    const std::size_t indent = leadingSpaces(l);
    if (blockParent != std::string_view::npos) {
      if (indent == l.size() || indent > blockParent) continue;  // block scalar content
      blockParent = std::string_view::npos;
    }
    char quote = 0;
    char previous = 0;  // the last non-blank character before the current one
    bool spaced = true;  // whitespace since `previous`
    std::size_t end = l.size();
    for (std::size_t i = 0; i < l.size(); ++i) {
      const char c = l[i];
      if (quote) {
        if (c == '\\' && quote == '"') ++i;
        else if (c == quote) quote = 0;
        previous = c;
        spaced = false;
        continue;
      }
      if (c == ' ' || c == '\t') {
        spaced = true;
        continue;
      }
      const bool nodeStart = previous == 0 || previous == '[' || previous == '{' || previous == ',' ||
                             ((previous == ':' || previous == '-' || previous == '?') && spaced);
      if (c == '#' && (previous == 0 || spaced)) {
        end = i;
        break;
      }
      if (nodeStart && (c == '"' || c == '\'')) {
        quote = c;
      } else if (nodeStart && (c == '&' || c == '*') && i + 1 < l.size() &&
                 std::strchr(" \t,[]{}", l[i + 1]) == nullptr) {
        return true;
      } else if (nodeStart && c == '<' && l.substr(i).starts_with("<<")) {
        std::size_t k = i + 2;
        while (k < l.size() && l[k] == ' ') ++k;
        if (k < l.size() && l[k] == ':') return true;
      }
      previous = c;
      spaced = false;
    }
    // A block scalar starts: "key: |", "- >-", "key: |2 # comment".
    std::string_view head = l.substr(0, end);
    while (!head.empty() && (head.back() == ' ' || head.back() == '\t')) head.remove_suffix(1);
    while (!head.empty() && (head.back() == '-' || head.back() == '+' || (head.back() >= '0' && head.back() <= '9'))) {
      head.remove_suffix(1);
    }
    if (!quote && !head.empty() && (head.back() == '|' || head.back() == '>')) {
      head.remove_suffix(1);
      if (head.empty() || head.back() == ' ' || head.back() == '\t') blockParent = indent;
    }
  }
  return false;
}

}  // namespace gpuguard::lint::fix_detail
