#include "lint/fix.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "lint/lint_file.h"
#include "rules/engine.h"
#include "rules/fix.h"
#include "rules/k8s/json_pointer.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

using nlohmann::json;

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

// The part of a line before a key or value that starts a block entry:
// only spaces (a mapping key), or spaces, '-' and spaces (the first key of
// a sequence item). Returns the indentation of the key / of the dash.
struct Prefix {
  enum Kind { Indent, Dash, Other } kind = Other;
  std::size_t indent = 0;  // spaces before the key, or before the dash
};
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

// A scalar as YAML text: a string plain when it reads back as the same
// string (nvidia.com/gpu, 500m, Exists), quoted when YAML 1.1 would read it
// as something else (yes, 1, 0x10, ~) or it holds other characters; numbers
// and booleans as JSON writes them.
// JSON text is YAML (a double-quoted string, a number); bytes that are not
// UTF-8 become U+FFFD instead of an exception.
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

const json* at(const json& root, const std::string& pointer) {
  try {
    const json::json_pointer p(pointer);
    return root.contains(p) ? &root.at(p) : nullptr;
  } catch (const json::exception&) {
    return nullptr;
  }
}


std::string child(const std::string& pointer, std::string_view key) {
  return pointer + "/" + escapeJsonPointerToken(key);
}

// Anchors (&a), aliases (*a) and merge keys (<<:) where a node starts (at
// the start of a line, after "key: ", "- ", '[', '{' or ','), outside
// comments, quoted text and block scalars (a shell heredoc "<<EOF" or
// "a && b" in a script is not one). Conservative: a false alarm only means
// "not fixed".
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

struct Edit {
  std::size_t line = 0;    // 1-based: insert before it, or the first line replaced
  std::size_t remove = 0;  // lines replaced
  std::vector<std::string> lines;  // new lines, without line breaks
};

// The fixes planned for one document.
struct DocPlan {
  std::size_t index = 0;
  json expected;  // what the document must decode to after the edits
  std::vector<Edit> edits;
  std::vector<std::pair<const Finding*, std::string>> fixed;  // finding, what was done
};

// The edits of one target: a list that gets items, a map that gets members,
// a member that gets renamed; with the findings that asked for them.
struct Target {
  JsonEdit::Op op = JsonEdit::Op::SetMember;
  std::string pointer;  // the list, the map, or the map holding the renamed member
  std::vector<const JsonEdit*> edits;
  std::vector<const Finding*> findings;
};

// The parent of a JSON pointer and the last reference token, unescaped.
std::pair<std::string, std::string> splitLast(const std::string& pointer) {
  const std::size_t slash = pointer.rfind('/');
  return {pointer.substr(0, slash), unescapeJsonPointerToken(std::string_view(pointer).substr(slash + 1))};
}

class Planner {
 public:
  Planner(const Lines& lines, const yaml::Document& doc, std::vector<FixNote>& notes)
      : lines_(lines), doc_(doc), notes_(notes) {}

  DocPlan plan(const std::vector<Finding>& findings, std::size_t lastLine) {
    DocPlan plan;
    plan.index = doc_.index;
    std::vector<Target> targets;
    std::vector<const Finding*> relevant;
    for (const Finding& f : findings) {
      if (f.suppressed || !f.fix) continue;
      if (f.fix->edits.empty()) {
        note(f, false, f.fix->description);
        continue;
      }
      relevant.push_back(&f);
      for (const JsonEdit& e : f.fix->edits) addTo(targets, f, e);
    }
    if (relevant.empty()) return plan;
    if (usesAnchors(lines_, static_cast<std::size_t>(std::max(1, doc_.start.line)), lastLine)) {
      for (const Finding* f : relevant) {
        note(*f, false,
             "the document uses anchors, aliases or merge keys (&, *, <<), and an edit could change "
             "every object that shares the node; fix it by hand");
      }
      return plan;
    }
    std::vector<JsonEdit> applied;
    for (const Target& t : targets) {
      std::string why;
      std::optional<Edit> e = planTarget(t, why);
      if (!e) {
        for (const Finding* f : t.findings) note(*f, false, why);
        continue;
      }
      plan.edits.push_back(std::move(*e));
      for (const JsonEdit* edit : t.edits) applied.push_back(*edit);
      for (const Finding* f : t.findings) plan.fixed.emplace_back(f, f->fix->description);
    }
    plan.expected = doc_.value.patch(toJsonPatch(applied, doc_.value));
    return plan;
  }

  void note(const Finding& f, bool fixed, std::string message) {
    const yaml::Position p = doc_.sources.locate(f.pointer());
    notes_.push_back({p.line, p.column, f.rule, fixed, std::move(message)});
  }

 private:
  static void addTo(std::vector<Target>& targets, const Finding& f, const JsonEdit& e) {
    std::string pointer = e.path.jsonPointer();
    if (e.op == JsonEdit::Op::RenameMember) pointer += "\n" + e.key + "\n" + e.newKey;  // one target per rename
    auto t = std::find_if(targets.begin(), targets.end(),
                          [&](const Target& x) { return x.op == e.op && x.pointer == pointer; });
    if (t == targets.end()) t = targets.insert(targets.end(), Target{e.op, pointer, {}, {}});
    if (std::none_of(t->edits.begin(), t->edits.end(), [&](const JsonEdit* x) { return *x == e; })) {
      t->edits.push_back(&e);
    }
    if (std::find(t->findings.begin(), t->findings.end(), &f) == t->findings.end()) t->findings.push_back(&f);
  }

  std::optional<Edit> planTarget(const Target& t, std::string& why) const {
    const JsonEdit& first = *t.edits.front();
    switch (t.op) {
      case JsonEdit::Op::RenameMember: return planRename(first.path.jsonPointer(), first.key, first.newKey, why);
      case JsonEdit::Op::SetMember: return planMembers(t, why);
      case JsonEdit::Op::AddToList: return planItems(t, why);
    }
    return std::nullopt;
  }

  const yaml::NodeOrigin* origin(const std::string& pointer) const { return doc_.sources.find(pointer); }

  const json* node(const std::string& pointer) const { return at(doc_.value, pointer); }

  // Direct children of a map, in source order: (key, origin).
  std::vector<std::pair<std::string, const yaml::NodeOrigin*>> children(const std::string& pointer,
                                                                        const json& map) const {
    std::vector<std::pair<std::string, const yaml::NodeOrigin*>> out;
    for (const auto& [k, v] : map.items()) {
      (void)v;
      const yaml::NodeOrigin* o = origin(child(pointer, k));
      if (!o || o->keyPosition.line == 0) return {};
      out.emplace_back(k, o);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second->keyPosition.line, a.second->keyPosition.column) <
             std::pair(b.second->keyPosition.line, b.second->keyPosition.column);
    });
    return out;
  }

  // The first of a map's keys (sorted, see children) that starts its line. In
  // a list item (an Argo template, a TrainJob podSpecOverrides entry) the
  // first key shares its line with the dash, and the second starts the next.
  const yaml::NodeOrigin* firstKeyOnItsOwnLine(
      const std::vector<std::pair<std::string, const yaml::NodeOrigin*>>& keys) const {
    const yaml::NodeOrigin* first = keys.front().second;
    if (keys.size() < 2 || !lines_.valid(first->keyPosition.line)) return first;
    const bool afterDash = prefixOf(lines_.line(first->keyPosition.line), first->keyPosition.column).kind == Prefix::Dash;
    return afterDash ? keys[1].second : first;
  }

  // Moves an insertion point up over the comment lines right above it (they
  // describe the line below them), but not above `floor`.
  std::size_t aboveComments(std::size_t line, std::size_t floor) const {
    while (line > floor + 1 && commentOnly(lines_.line(line - 1))) --line;
    return line;
  }

  // The line of a key written `key:` with an empty value ({}, [], ~, null or
  // nothing), the key first on its line. Returns its indentation and any
  // trailing comment.
  struct EmptyKeyLine {
    std::size_t line = 0;
    std::size_t indent = 0;
    std::string comment;
  };
  std::optional<EmptyKeyLine> emptyKeyLine(const yaml::NodeOrigin* o, std::string_view key) const {
    if (!o || !lines_.valid(o->keyPosition.line)) return std::nullopt;
    const std::string_view l = lines_.line(o->keyPosition.line);
    const Prefix p = prefixOf(l, o->keyPosition.column);
    if (p.kind != Prefix::Indent) return std::nullopt;
    std::string_view rest = l.substr(p.indent);
    if (!rest.starts_with(key)) return std::nullopt;
    rest.remove_prefix(key.size());
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(' ')));
    if (!rest.starts_with(":")) return std::nullopt;
    rest.remove_prefix(1);
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
    std::string comment;
    if (const std::size_t hash = rest.find(" #"); hash != std::string_view::npos) {
      comment = std::string(rest.substr(hash + 1));
      rest = rest.substr(0, hash);
    } else if (rest.starts_with("#")) {
      comment = std::string(rest);
      rest = {};
    }
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    std::string compact;
    for (char c : rest) {
      if (c != ' ' && c != '\t') compact += c;
    }
    if (!compact.empty() && compact != "{}" && compact != "[]" && compact != "~" && compact != "null" &&
        compact != "Null" && compact != "NULL") {
      return std::nullopt;
    }
    return EmptyKeyLine{static_cast<std::size_t>(o->keyPosition.line), p.indent, comment};
  }

  // How far this map's block sequences sit right of their key (0:
  // "containers:\n- name", 2: "containers:\n  - name"), from its first
  // non-empty list; 0 when it has none.
  std::size_t sequenceIndent(const std::string& mapPointer, const json& map) const {
    for (const auto& [k, v] : map.items()) {
      if (!v.is_array() || v.empty()) continue;
      const yaml::NodeOrigin* list = origin(child(mapPointer, k));
      const yaml::NodeOrigin* first = origin(child(mapPointer, k) + "/0");
      if (!list || !first || !lines_.valid(list->keyPosition.line) || !lines_.valid(first->position.line)) continue;
      const Prefix key = prefixOf(lines_.line(list->keyPosition.line), list->keyPosition.column);
      const Prefix item = prefixOf(lines_.line(first->position.line), first->position.column);
      if (key.kind != Prefix::Indent || item.kind != Prefix::Dash || item.indent < key.indent) continue;
      return item.indent - key.indent;
    }
    return 0;
  }

  // How much further a map's members are indented than its key; 2 when unknown.
  std::size_t memberIndent(const std::string& mapPointer, const json& map) const {
    const yaml::NodeOrigin* o = origin(mapPointer);
    const auto keys = children(mapPointer, map);
    if (!o || keys.empty()) return 2;
    const yaml::NodeOrigin* firstKey = keys.front().second;
    if (firstKey->keyPosition.line > o->keyPosition.line && firstKey->keyPosition.column > o->keyPosition.column) {
      return static_cast<std::size_t>(firstKey->keyPosition.column - o->keyPosition.column);
    }
    return 2;
  }

  // A new member `name` with `body` (lines relative to the member's indentation,
  // the first being "name:"), at the head of the block map at `parentPointer`.
  std::optional<Edit> insertMember(const std::string& parentPointer, std::vector<std::string> body,
                                   std::string& why) const {
    const json* parent = node(parentPointer);
    const std::string where = parentPointer.empty() ? "the object" : splitLast(parentPointer).second;
    if (!parent || !parent->is_object()) return why = where + " is not a map", std::nullopt;
    const auto keys = children(parentPointer, *parent);
    if (keys.empty() || keys.size() != parent->size()) return why = where + " has no source lines", std::nullopt;
    const yaml::NodeOrigin* parentOrigin = origin(parentPointer);
    const std::size_t parentLine =
        parentOrigin && parentOrigin->keyPosition.line > 0 ? static_cast<std::size_t>(parentOrigin->keyPosition.line) : 0;
    const yaml::NodeOrigin* first = firstKeyOnItsOwnLine(keys);
    if (!lines_.valid(first->keyPosition.line) || static_cast<std::size_t>(first->keyPosition.line) <= parentLine) {
      return why = where + " is written in flow style ({...})", std::nullopt;
    }
    const Prefix p = prefixOf(lines_.line(first->keyPosition.line), first->keyPosition.column);
    if (p.kind != Prefix::Indent) return why = where + " is written in flow style ({...})", std::nullopt;
    Edit e{aboveComments(static_cast<std::size_t>(first->keyPosition.line), parentLine), 0, {}};
    for (std::string& l : body) e.lines.push_back(std::string(p.indent, ' ') + l);
    return e;
  }

  // `name: {}` / `name: []` / `name:` replaced by `name:` and `body` below it.
  std::optional<Edit> fillEmpty(const std::string& pointer, const std::string& name, const std::vector<std::string>& body,
                                std::size_t bodyIndent, std::string& why) const {
    const std::optional<EmptyKeyLine> k = emptyKeyLine(origin(pointer), name);
    if (!k) return why = "the empty " + name + " is not written as `" + name + ": " + "{}`", std::nullopt;
    Edit e{k->line, 1, {std::string(k->indent, ' ') + name + ":" + (k->comment.empty() ? "" : " " + k->comment)}};
    for (const std::string& l : body) e.lines.push_back(std::string(k->indent + bodyIndent, ' ') + l);
    return e;
  }

  std::optional<Edit> planRename(const std::string& mapPointer, const std::string& key, const std::string& newKey,
                                 std::string& why) const {
    const yaml::NodeOrigin* o = origin(child(mapPointer, key));
    if (!o || !lines_.valid(o->keyPosition.line)) return why = key + " has no source line", std::nullopt;
    const std::size_t n = static_cast<std::size_t>(o->keyPosition.line);
    const std::string_view l = lines_.line(n);
    const std::optional<std::size_t> i = byteIndex(l, o->keyPosition.column);
    for (const std::string& token : {key, "\"" + key + "\"", "'" + key + "'"}) {
      if (!i || !l.substr(*i).starts_with(token)) continue;
      std::string_view after = l.substr(*i + token.size());
      after.remove_prefix(std::min(after.size(), after.find_first_not_of(' ')));
      if (!after.starts_with(":")) continue;
      const char quote = token.front() == '"' || token.front() == '\'' ? token.front() : 0;
      const std::string replacement = quote ? quote + newKey + quote : newKey;
      return Edit{n, 1, {std::string(l.substr(0, *i)) + replacement + std::string(l.substr(*i + token.size()))}};
    }
    why = "the " + key + " key is not where the source map says";
    return std::nullopt;
  }

  // Where the node a SetMember copies was written; (0, 0) for a value of
  // the rule's own, which keeps its place ahead of the copies.
  std::pair<int, int> copiedPosition(const JsonEdit& e) const {
    const yaml::NodeOrigin* o = e.copiedFrom ? origin(e.copiedFrom->jsonPointer()) : nullptr;
    return o ? std::pair(o->position.line, o->position.column) : std::pair(0, 0);
  }

  // The YAML text of a value to set: a copy as its source was written (a
  // plain scalar's text, 0x1 stays 0x1; a quoted string quoted), else the
  // value as a YAML scalar.
  std::string valueText(const JsonEdit& e) const {
    const yaml::NodeOrigin* o = e.copiedFrom ? origin(e.copiedFrom->jsonPointer()) : nullptr;
    if (o && o->plainScalar && !o->writtenText.empty() && o->writtenText.find('\n') == std::string::npos) {
      return o->writtenText;
    }
    if (o && !o->plainScalar && e.value.is_string()) return jsonText(e.value);
    return yamlScalar(e.value);
  }

  // SetMember edits of one map: new `key: value` lines, copies in the order
  // their sources were written (a container's requests as written, not by name).
  std::optional<Edit> planMembers(const Target& t, std::string& why) const {
    std::vector<const JsonEdit*> edits = t.edits;
    std::stable_sort(edits.begin(), edits.end(), [&](const JsonEdit* a, const JsonEdit* b) {
      return copiedPosition(*a) < copiedPosition(*b);
    });
    std::vector<std::string> entries;
    for (const JsonEdit* e : edits) {
      if (e->value.is_structured()) return why = "the value to set is not a scalar", std::nullopt;
      entries.push_back(yamlScalar(e->key) + ": " + valueText(*e));
    }
    const auto [parentPointer, name] = splitLast(t.pointer);
    const json* map = node(t.pointer);
    const json* parent = node(parentPointer);
    const std::size_t step = parent && parent->is_object() ? memberIndent(parentPointer, *parent) : 2;
    if (!map) {
      std::vector<std::string> body{yamlScalar(name) + ":"};
      for (const std::string& entry : entries) body.push_back(std::string(step, ' ') + entry);
      return insertMember(parentPointer, std::move(body), why);
    }
    if (map->is_object() && !map->empty()) {
      const auto keys = children(t.pointer, *map);
      const yaml::NodeOrigin* o = origin(t.pointer);
      if (keys.size() != map->size() || !o) return why = name + " has no source lines", std::nullopt;
      const yaml::NodeOrigin* first = keys.front().second;
      if (!lines_.valid(first->keyPosition.line) || first->keyPosition.line <= o->keyPosition.line) {
        return why = name + " is written in flow style ({...})", std::nullopt;
      }
      const Prefix p = prefixOf(lines_.line(first->keyPosition.line), first->keyPosition.column);
      if (p.kind != Prefix::Indent) return why = name + " is written in flow style ({...})", std::nullopt;
      Edit e{aboveComments(static_cast<std::size_t>(first->keyPosition.line), static_cast<std::size_t>(o->keyPosition.line)),
             0, {}};
      for (const std::string& entry : entries) e.lines.push_back(std::string(p.indent, ' ') + entry);
      return e;
    }
    if (map->is_null() || (map->is_object() && map->empty())) return fillEmpty(t.pointer, name, entries, step, why);
    why = name + " is not a map";
    return std::nullopt;
  }

  // AddToList edits of one list: new items at its head.
  std::optional<Edit> planItems(const Target& t, std::string& why) const {
    std::vector<std::string> items;  // relative to the dash
    for (const JsonEdit* e : t.edits) {
      if (!appendItem(items, e->value)) return why = "the item to add is not a map of scalars", std::nullopt;
    }
    const auto [parentPointer, name] = splitLast(t.pointer);
    const json* list = node(t.pointer);
    const json* parent = node(parentPointer);
    const std::size_t seqIndent = parent && parent->is_object() ? sequenceIndent(parentPointer, *parent) : 0;
    if (!list) {
      std::vector<std::string> body{yamlScalar(name) + ":"};
      for (const std::string& l : items) body.push_back(std::string(seqIndent, ' ') + l);
      return insertMember(parentPointer, std::move(body), why);
    }
    if (list->is_array() && !list->empty()) {
      const yaml::NodeOrigin* o = origin(t.pointer);
      const yaml::NodeOrigin* first = origin(t.pointer + "/0");
      if (!first || !o || !lines_.valid(first->position.line) || first->position.line <= o->keyPosition.line) {
        return why = name + " is written in flow style ([...])", std::nullopt;
      }
      const Prefix p = prefixOf(lines_.line(first->position.line), first->position.column);
      if (p.kind != Prefix::Dash) return why = "the first item of " + name + " does not start its line with '- '", std::nullopt;
      Edit e{aboveComments(static_cast<std::size_t>(first->position.line), static_cast<std::size_t>(o->keyPosition.line)),
             0, {}};
      for (const std::string& l : items) e.lines.push_back(std::string(p.indent, ' ') + l);
      return e;
    }
    if (list->is_null() || (list->is_array() && list->empty())) {
      const std::optional<EmptyKeyLine> k = emptyKeyLine(origin(t.pointer), name);
      if (!k) return why = "the empty " + name + " is not written as `" + name + ": []`", std::nullopt;
      Edit e{k->line, 1, {std::string(k->indent, ' ') + name + ":" + (k->comment.empty() ? "" : " " + k->comment)}};
      for (const std::string& l : items) e.lines.push_back(std::string(k->indent + seqIndent, ' ') + l);
      return e;
    }
    why = name + " is not a list";
    return std::nullopt;
  }

  // "- key: value" then "  key: value" for each member, in the order written.
  static bool appendItem(std::vector<std::string>& lines, const nlohmann::ordered_json& item) {
    if (!item.is_object() || item.empty()) return false;
    bool first = true;
    for (const auto& [k, v] : item.items()) {
      if (v.is_structured()) return false;
      lines.push_back(std::string(first ? "- " : "  ") + yamlScalar(k) + ": " + yamlScalar(v));
      first = false;
    }
    return true;
  }

  const Lines& lines_;
  const yaml::Document& doc_;
  std::vector<FixNote>& notes_;
};

// Applies non-overlapping edits (sorted by line; inserts before replacements
// at the same line).
std::string apply(const Lines& lines, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return std::pair(a.line, a.remove) < std::pair(b.line, b.remove);
  });
  std::string out;
  std::size_t next = 0;
  for (std::size_t n = 1; n <= lines.count() + 1; ++n) {
    bool replaced = false;
    while (next < edits.size() && edits[next].line == n) {
      const Edit& e = edits[next++];
      for (std::size_t k = 0; k < e.lines.size(); ++k) {
        out += e.lines[k];
        // The last line of a replacement keeps the replaced line's break.
        const bool last = k + 1 == e.lines.size();
        out += e.remove > 0 && last ? std::string(lines.lineBreak(n + e.remove - 1)) : lines.eol();
      }
      if (e.remove > 0) {
        n += e.remove - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced && n <= lines.count()) {
      const std::string_view full = lines.full(n);
      out += full;
      // New lines inserted after a last line without a break need one.
      if (n == lines.count() && lines.lineBreak(n).empty() && next < edits.size()) out += lines.eol();
    }
  }
  return out;
}

bool overlaps(const std::vector<Edit>& taken, const Edit& e) {
  for (const Edit& t : taken) {
    const std::size_t tEnd = t.line + t.remove, eEnd = e.line + e.remove;
    if (t.remove > 0 && e.remove > 0 && t.line < eEnd && e.line < tEnd) return true;
    if (t.remove > 0 && e.remove == 0 && e.line > t.line && e.line < tEnd) return true;
    if (e.remove > 0 && t.remove == 0 && t.line > e.line && t.line < eEnd) return true;
  }
  return false;
}

}  // namespace

FixResult fixText(std::string_view input, const LintPolicy& policy) {
  FixResult result;
  result.text = std::string(input);
  std::string_view bom;
  std::string_view text = input;
  if (text.starts_with("\xEF\xBB\xBF")) {
    bom = text.substr(0, 3);
    text.remove_prefix(3);
  }
  const yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error) {
    result.notes.push_back({parsed.error->position.line, parsed.error->position.column, "", false,
                            "the file does not parse (" + parsed.error->message + ")"});
    return result;
  }
  if (text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE")) {
    result.notes.push_back({0, 0, "", false, "the file is UTF-16; fixes are made in UTF-8 files only"});
    return result;
  }
  const Lines lines(text);

  const InputFacts facts = inputFacts(parsed);  // judged as the lint judges them
  std::vector<std::vector<Finding>> findings(parsed.documents.size());
  std::vector<DocPlan> plans;
  std::vector<FixNote> notes;
  for (std::size_t i = 0; i < parsed.documents.size(); ++i) {
    const yaml::Document& doc = parsed.documents[i];
    if (!isKubernetesObject(doc.value)) continue;
    findings[i] = judgeDocument(doc, policy, looksLikeFragment(doc.value), &facts);  // a fragment: fix only what it is judged for
    const std::size_t lastLine = i + 1 < parsed.documents.size() && parsed.documents[i + 1].start.line > 0
                                     ? static_cast<std::size_t>(parsed.documents[i + 1].start.line - 1)
                                     : lines.count();
    Planner planner(lines, doc, notes);
    DocPlan plan = planner.plan(findings[i], lastLine);
    if (!plan.edits.empty()) plans.push_back(std::move(plan));
  }

  // Drop plans whose edits collide with an earlier plan's, then apply and
  // verify; a plan whose document does not decode as intended is dropped
  // and the rest applied again.
  auto rejectPlan = [&](const DocPlan& plan, const std::string& why) {
    Planner planner(lines, parsed.documents[plan.index], notes);
    for (const auto& [f, what] : plan.fixed) planner.note(*f, false, why);
  };
  {
    std::vector<Edit> taken;
    std::vector<DocPlan> kept;
    for (DocPlan& plan : plans) {
      std::vector<Edit> mine = taken;
      bool collides = false;
      for (const Edit& e : plan.edits) {
        collides = collides || overlaps(mine, e);
        mine.push_back(e);
      }
      if (collides) {
        rejectPlan(plan, "two fixes would edit the same lines");
        continue;
      }
      taken = std::move(mine);
      kept.push_back(std::move(plan));
    }
    plans = std::move(kept);
  }
  std::string fixedText;
  while (!plans.empty()) {
    std::vector<Edit> edits;
    for (const DocPlan& plan : plans) edits.insert(edits.end(), plan.edits.begin(), plan.edits.end());
    fixedText = apply(lines, edits);
    const yaml::ParseResult again = yaml::parseStream(fixedText);
    if (again.error || again.documents.size() != parsed.documents.size()) {
      for (const DocPlan& plan : plans) rejectPlan(plan, "the edited file did not parse back as intended");
      plans.clear();
      break;
    }
    std::vector<DocPlan> good;
    bool allGood = true;
    for (DocPlan& plan : plans) {
      if (again.documents[plan.index].value == plan.expected) {
        good.push_back(std::move(plan));
      } else {
        allGood = false;
        rejectPlan(plan, "the edit did not give the intended object (please report this)");
      }
    }
    plans = std::move(good);
    if (allGood) break;
  }

  for (const DocPlan& plan : plans) {
    Planner planner(lines, parsed.documents[plan.index], notes);
    for (const auto& [f, what] : plan.fixed) {
      planner.note(*f, true, what);
      ++result.fixed;
    }
  }
  std::stable_sort(notes.begin(), notes.end(), [](const FixNote& a, const FixNote& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  result.notes = std::move(notes);
  if (!plans.empty()) {
    result.text = std::string(bom) + fixedText;
    result.changed = result.text != input;
  }
  return result;
}

// ---------------------------------------------------------------------------
// Unified diff (Myers' O(ND) algorithm on lines, after trimming the common
// head and tail).

namespace {

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

enum class Op { Keep, Del, Add };

// The edit script from a to b (both already without common head and tail).
std::vector<Op> myers(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  const long max = n + m;
  constexpr long kMaxD = 2000;  // beyond this, replace the whole middle
  std::vector<std::vector<long>> trace;
  std::vector<long> v(2 * static_cast<std::size_t>(max) + 2, 0);
  const long off = max + 1;
  long found = -1;
  constexpr std::size_t kMaxTrace = 16u << 20;  // entries kept for the backtrack
  for (long d = 0; d <= std::min(max, kMaxD) && (static_cast<std::size_t>(d) + 1) * v.size() <= kMaxTrace; ++d) {
    trace.push_back(v);
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  std::vector<Op> ops;
  if (found < 0) {
    ops.assign(static_cast<std::size_t>(n), Op::Del);
    ops.insert(ops.end(), static_cast<std::size_t>(m), Op::Add);
    return ops;
  }
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& pv = trace[static_cast<std::size_t>(d)];
    const long k = x - y;
    const long prevK = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
    const long prevX = pv[off + prevK];
    const long prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push_back(Op::Keep);
      --x, --y;
    }
    ops.push_back(x == prevX ? Op::Add : Op::Del);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push_back(Op::Keep);
    --x, --y;
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

void emitLine(std::string& out, char mark, std::string_view line) {
  out += mark;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unifiedDiff(std::string_view before, std::string_view after, const std::string& name) {
  if (before == after) return "";
  const std::vector<std::string_view> a = splitLines(before), b = splitLines(after);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const std::vector<std::string_view> midA(a.begin() + static_cast<long>(head), a.end() - static_cast<long>(tail));
  const std::vector<std::string_view> midB(b.begin() + static_cast<long>(head), b.end() - static_cast<long>(tail));
  std::vector<Op> ops(head, Op::Keep);
  for (Op op : myers(midA, midB)) ops.push_back(op);
  ops.insert(ops.end(), tail, Op::Keep);

  std::string out = "--- a/" + name + "\n+++ b/" + name + "\n";
  constexpr std::size_t kContext = 3;
  // Walk the script, cutting hunks around changes.
  std::size_t i = 0;
  std::size_t ai = 0, bi = 0;  // line indexes at ops[i]
  while (i < ops.size()) {
    if (ops[i] == Op::Keep) {
      ++i, ++ai, ++bi;
      continue;
    }
    // A change at ops[i]: the hunk starts kContext lines before.
    const std::size_t back = std::min(kContext, std::min(ai, bi));
    std::size_t start = i - back, hunkA = ai - back, hunkB = bi - back;
    // Extend while changes are within 2*kContext of each other.
    std::size_t end = i, keepRun = 0, lastChange = i;
    for (std::size_t j = i; j < ops.size(); ++j) {
      if (ops[j] == Op::Keep) {
        if (++keepRun > 2 * kContext) break;
      } else {
        keepRun = 0;
        lastChange = j;
      }
    }
    end = std::min(ops.size(), lastChange + 1 + kContext);
    std::size_t countA = 0, countB = 0;
    for (std::size_t j = start; j < end; ++j) {
      if (ops[j] != Op::Add) ++countA;
      if (ops[j] != Op::Del) ++countB;
    }
    out += "@@ -" + std::to_string(countA ? hunkA + 1 : hunkA) + (countA == 1 ? "" : "," + std::to_string(countA)) +
           " +" + std::to_string(countB ? hunkB + 1 : hunkB) + (countB == 1 ? "" : "," + std::to_string(countB)) +
           " @@\n";
    std::size_t x = hunkA, y = hunkB;
    for (std::size_t j = start; j < end; ++j) {
      switch (ops[j]) {
        case Op::Keep: emitLine(out, ' ', a[x++]); ++y; break;
        case Op::Del: emitLine(out, '-', a[x++]); break;
        case Op::Add: emitLine(out, '+', b[y++]); break;
      }
    }
    ai = x, bi = y, i = end;
  }
  return out;
}

}  // namespace gpuguard::lint
