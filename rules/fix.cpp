#include "rules/fix.h"

#include <algorithm>
#include <map>

namespace gpuguard {
namespace {

using nlohmann::json;

// The node at `pointer`, or nullptr.
const json* nodeAt(const json& root, const std::string& pointer) {
  const json::json_pointer p(pointer);
  return root.contains(p) ? &root.at(p) : nullptr;
}

bool absentOrEmpty(const json* node) { return !node || node->is_null() || (node->is_structured() && node->empty()); }

json operation(const char* op, const std::string& path, json value) {
  return {{"op", op}, {"path", path}, {"value", std::move(value)}};
}

// The parent of `pointer` exists in `object` (JSONPatch adds only there).
bool parentExists(const json& object, const std::string& pointer) {
  const std::size_t slash = pointer.rfind('/');
  return slash != std::string::npos && (slash == 0 || nodeAt(object, pointer.substr(0, slash)) != nullptr);
}

}  // namespace

JsonEdit JsonEdit::addToList(FieldPath list, nlohmann::ordered_json item) {
  JsonEdit e;
  e.op = Op::AddToList;
  e.path = std::move(list);
  e.value = std::move(item);
  return e;
}

JsonEdit JsonEdit::setMember(FieldPath map, std::string key, nlohmann::ordered_json value) {
  JsonEdit e;
  e.op = Op::SetMember;
  e.path = std::move(map);
  e.key = std::move(key);
  e.value = std::move(value);
  return e;
}

JsonEdit JsonEdit::copyMember(FieldPath map, std::string key, FieldPath source, nlohmann::ordered_json value) {
  JsonEdit e = setMember(std::move(map), std::move(key), std::move(value));
  e.copiedFrom = std::move(source);
  return e;
}

JsonEdit JsonEdit::renameMember(FieldPath map, std::string key, std::string newKey) {
  JsonEdit e;
  e.op = Op::RenameMember;
  e.path = std::move(map);
  e.key = std::move(key);
  e.newKey = std::move(newKey);
  return e;
}

bool JsonEdit::operator==(const JsonEdit& other) const {
  return op == other.op && path.jsonPointer() == other.path.jsonPointer() && key == other.key &&
         newKey == other.newKey && value == other.value &&
         copiedFrom.has_value() == other.copiedFrom.has_value() &&
         (!copiedFrom || copiedFrom->jsonPointer() == other.copiedFrom->jsonPointer());
}

json toJsonPatch(const std::vector<JsonEdit>& edits, const json& object) {
  json patch = json::array();
  json working = object;  // each operation applies to what the earlier ones made
  std::map<std::string, std::size_t> headInsertions;  // list pointer -> items added at its head so far
  std::vector<const JsonEdit*> seen;
  for (const JsonEdit& e : edits) {
    if (std::any_of(seen.begin(), seen.end(), [&](const JsonEdit* s) { return *s == e; })) continue;
    seen.push_back(&e);
    const std::string target = e.path.jsonPointer();
    const json* node = nodeAt(working, target);
    json op;
    switch (e.op) {
      case JsonEdit::Op::AddToList:
        if (node && node->is_array() && !node->empty()) {
          op = operation("add", target + "/" + std::to_string(headInsertions[target]++), json(e.value));
        } else if (absentOrEmpty(node) && parentExists(working, target)) {
          op = operation("add", target, json::array({json(e.value)}));
          headInsertions[target] = 1;
        }
        break;
      case JsonEdit::Op::SetMember:
        if (node && node->is_object() && !node->empty()) {
          op = operation("add", target + "/" + escapeJsonPointerToken(e.key), json(e.value));
        } else if (absentOrEmpty(node) && parentExists(working, target)) {
          op = operation("add", target, json{{e.key, json(e.value)}});
        }
        break;
      case JsonEdit::Op::RenameMember:
        if (node && node->is_object() && node->contains(e.key) && !node->contains(e.newKey)) {
          op = {{"op", "move"},
                {"from", target + "/" + escapeJsonPointerToken(e.key)},
                {"path", target + "/" + escapeJsonPointerToken(e.newKey)}};
        }
        break;
    }
    if (op.is_null()) continue;
    working = working.patch(json::array({op}));
    patch.push_back(std::move(op));
  }
  return patch;
}

}  // namespace gpuguard
