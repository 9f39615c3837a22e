// The planner of --fix (planner.h).
#include "lint/fix/planner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "rules/fix.h"
#include "rules/k8s/json_pointer.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint::fix_detail {
namespace {

using nlohmann::json;

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

json* at(json& root, const std::string& pointer) {
  return const_cast<json*>(at(static_cast<const json&>(root), pointer));
}

bool absentOrEmpty(const json* node) { return !node || node->is_null() || (node->is_structured() && node->empty()); }

// Sets `pointer` to `value` where a JSONPatch "add" would: replacing the
// node, or as a new member of the map above it. False when neither exists.
bool addAt(json& root, const std::string& pointer, json value) {
  if (json* node = at(root, pointer)) {
    *node = std::move(value);
    return true;
  }
  if (pointer.find('/') == std::string::npos) return false;
  auto [parentPointer, name] = splitLastJsonPointerToken(pointer);
  json* parent = at(root, std::string(parentPointer));
  if (!parent || !parent->is_object()) return false;
  (*parent)[std::move(name)] = std::move(value);
  return true;
}

// The object `edits` make of `object`, edited in place: what
// toJsonPatch(edits, object) applied would give (rules/fix.h: items at the
// head of a list in the order given, members set, members renamed), without
// copying the object once per edit, so that a pod with thousands of fixes
// costs linear time.
json applyEdits(json object, const std::vector<const JsonEdit*>& edits) {
  std::unordered_map<std::string, std::size_t> headInsertions;  // list pointer -> items added at its head
  for (const JsonEdit* e : edits) {
    const std::string target = e->path.jsonPointer();
    json* node = at(object, target);
    switch (e->op) {
      case JsonEdit::Op::AddToList:
        if (node && node->is_array() && !node->empty()) {
          std::size_t& head = headInsertions[target];
          node->insert(node->begin() + static_cast<std::ptrdiff_t>(std::min(head++, node->size())), json(e->value));
        } else if (absentOrEmpty(node) && addAt(object, target, json::array({json(e->value)}))) {
          headInsertions[target] = 1;
        }
        break;
      case JsonEdit::Op::SetMember:
        if (node && node->is_object() && !node->empty()) (*node)[e->key] = json(e->value);
        else if (absentOrEmpty(node)) addAt(object, target, json{{e->key, json(e->value)}});
        break;
      case JsonEdit::Op::RenameMember:
        if (node && node->is_object() && node->contains(e->key) && !node->contains(e->newKey)) {
          json moved = std::move((*node)[e->key]);
          node->erase(e->key);
          (*node)[e->newKey] = std::move(moved);
        }
        break;
    }
  }
  return object;
}


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
  auto [parent, name] = splitLastJsonPointerToken(pointer);
  return {std::string(parent), std::move(name)};
}

class Planner {
 public:
  Planner(const Lines& lines, const yaml::Document& doc, std::vector<FixNote>& notes)
      : lines_(lines), doc_(doc), notes_(notes) {}

  DocPlan plan(const std::vector<Finding>& findings, std::size_t lastLine) {
    DocPlan plan;
    plan.index = doc_.index;
    std::vector<Target> targets;
    std::unordered_map<std::string, std::size_t> targetIndex;  // op and pointer -> index in targets
    std::vector<const Finding*> relevant;
    for (const Finding& f : findings) {
      if (f.suppressed || !f.fix) continue;
      if (f.fix->edits.empty()) {
        note(f, false, f.fix->description);
        continue;
      }
      relevant.push_back(&f);
      for (const JsonEdit& e : f.fix->edits) addTo(targets, targetIndex, f, e);
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
    std::vector<const JsonEdit*> applied;
    for (const Target& t : targets) {
      std::string why;
      std::optional<Edit> e = planTarget(t, why);
      if (!e) {
        for (const Finding* f : t.findings) note(*f, false, why);
        continue;
      }
      plan.edits.push_back(std::move(*e));
      applied.insert(applied.end(), t.edits.begin(), t.edits.end());
      for (const Finding* f : t.findings) plan.fixed.emplace_back(f, f->fix->description);
    }
    plan.expected = applyEdits(doc_.value, applied);
    return plan;
  }

  void note(const Finding& f, bool fixed, std::string message) { noteFinding(doc_, f, fixed, std::move(message), notes_); }

 private:
  // Files an edit under its target (one per list, map or rename), found
  // through `index` so that thousands of targets cost linear time.
  static void addTo(std::vector<Target>& targets, std::unordered_map<std::string, std::size_t>& index,
                    const Finding& f, const JsonEdit& e) {
    std::string pointer = e.path.jsonPointer();
    if (e.op == JsonEdit::Op::RenameMember) pointer += "\n" + e.key + "\n" + e.newKey;  // one target per rename
    const auto [slot, added] = index.try_emplace(std::to_string(static_cast<int>(e.op)) + pointer, targets.size());
    if (added) targets.push_back(Target{e.op, pointer, {}, {}});
    Target& t = targets[slot->second];
    if (std::none_of(t.edits.begin(), t.edits.end(), [&](const JsonEdit* x) { return *x == e; })) {
      t.edits.push_back(&e);
    }
    if (std::find(t.findings.begin(), t.findings.end(), &f) == t.findings.end()) t.findings.push_back(&f);
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
  // `why` says what stands in the way when there is none.
  std::optional<EmptyKeyLine> emptyKeyLine(const yaml::NodeOrigin* o, std::string_view key, std::string_view empty,
                                           std::string& why) const {
    why = "the empty " + std::string(key) + " is not written as `" + std::string(key) + ": " + std::string(empty) + "`";
    if (!o || !lines_.valid(o->keyPosition.line)) return std::nullopt;
    const std::string_view l = lines_.line(o->keyPosition.line);
    const Prefix p = prefixOf(l, o->keyPosition.column);
    if (p.kind != Prefix::Indent) {
      why = std::string(key) + " is not first on its line (inside a flow mapping {...})";
      return std::nullopt;
    }
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
    const std::optional<EmptyKeyLine> k = emptyKeyLine(origin(pointer), name, "{}", why);
    if (!k) return std::nullopt;
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
      const std::optional<EmptyKeyLine> k = emptyKeyLine(origin(t.pointer), name, "[]", why);
      if (!k) return std::nullopt;
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

}  // namespace

DocPlan planDocument(const Lines& lines, const yaml::Document& doc, const std::vector<Finding>& findings,
                     std::size_t lastLine, std::vector<FixNote>& notes) {
  return Planner(lines, doc, notes).plan(findings, lastLine);
}

void noteFinding(const yaml::Document& doc, const Finding& f, bool fixed, std::string message,
                 std::vector<FixNote>& notes) {
  const yaml::Position p = doc.sources.locate(f.pointer());
  notes.push_back({p.line, p.column, f.rule, fixed, std::move(message)});
}

}  // namespace gpuguard::lint::fix_detail
