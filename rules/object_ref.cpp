#include "rules/object_ref.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "rules/k8s/field_path.h"
#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

bool isIdentifier(std::string_view key) {
  if (key.empty() || !std::isalpha(static_cast<unsigned char>(key.front()))) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Splits the first reference token off `pointer` (which starts with '/'),
// decoded.
std::string takeToken(std::string_view& pointer) {
  pointer.remove_prefix(1);
  const std::size_t slash = pointer.find('/');
  std::string token(pointer.substr(0, slash));
  pointer = slash == std::string_view::npos ? std::string_view() : pointer.substr(slash);
  for (std::size_t at = 0; (at = token.find('~', at)) != std::string::npos; ++at)
    token.replace(at, 2, token.compare(at, 2, "~1") == 0 ? "/" : "~");
  return token;
}

bool parseIndex(const std::string& token, std::size_t& index) {
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  return ec == std::errc() && end == token.data() + token.size() && !token.empty();
}

// A List as kubectl prints one: kind FooList (or List) with an items array.
bool isList(const json& v) {
  if (!v.is_object()) return false;
  const auto kind = v.find("kind");
  const auto items = v.find("items");
  return kind != v.end() && kind->is_string() && kind->get_ref<const std::string&>().ends_with("List") &&
         items != v.end() && items->is_array();
}

ObjectRef describe(const json& object, std::string pointer) {
  ObjectRef ref;
  ref.pointer = std::move(pointer);
  if (!object.is_object()) return ref;
  ref.apiVersion = stringOr(object, "apiVersion");
  ref.kind = stringOr(object, "kind");
  const auto metadata = object.find("metadata");
  if (metadata != object.end() && metadata->is_object()) {
    ref.ns = stringOr(*metadata, "namespace");
    ref.name = stringOr(*metadata, "name");
    if (ref.name.empty()) ref.name = stringOr(*metadata, "generateName");
  }
  return ref;
}

}  // namespace

std::string ObjectRef::display() const {
  const std::string shownKind = kind.empty() ? "Object" : kind;
  const std::string shownName = name.empty() ? "<unnamed>" : name;
  return ns.empty() ? shownKind + "/" + shownName : shownKind + "/" + ns + "/" + shownName;
}

ObjectLocator::ObjectLocator(const json& document) : document_(document), sites_(findPodSites(document)) {}

ObjectRef ObjectLocator::at(std::string_view pointer) const {
  // Down through Lists (and Lists of Lists) to the item holding the pointer.
  const json* object = &document_;
  std::string objectPointer;
  std::string_view rest = pointer;
  while (isList(*object) && rest.starts_with("/items/")) {
    std::string_view probe = rest;
    takeToken(probe);  // "items"
    std::size_t index = 0;
    if (!parseIndex(takeToken(probe), index) || index >= (*object)["items"].size()) break;
    objectPointer += "/items/" + std::to_string(index);
    object = &(*object)["items"][index];
    rest = probe;
  }
  ObjectRef ref = describe(*object, objectPointer);
  // The innermost pod spec whose pointer is a prefix of the finding's.
  std::size_t best = 0;
  for (const PodSite& site : sites_) {
    const std::string spec = site.specPath.jsonPointer();
    const bool inside = pointer.starts_with(spec) && (pointer.size() == spec.size() || pointer[spec.size()] == '/');
    if (inside && spec.size() > objectPointer.size() && spec.size() >= best) {
      best = spec.size();
      ref.podTemplate = apiPathOfPointer(std::string_view(spec).substr(objectPointer.size()), *object);
    }
  }
  return ref;
}

std::vector<ObjectRef> ObjectLocator::objects() const {
  std::vector<ObjectRef> out;
  std::vector<std::pair<const json*, std::string>> pending{{&document_, ""}};
  while (!pending.empty()) {
    auto [object, pointer] = std::move(pending.back());
    pending.pop_back();
    if (!isList(*object)) {
      out.push_back(describe(*object, pointer));
      continue;
    }
    const json& items = (*object)["items"];
    for (std::size_t i = items.size(); i-- > 0;) pending.emplace_back(&items[i], pointer + "/items/" + std::to_string(i));
  }
  return out;
}

std::string apiPathOfPointer(std::string_view pointer, const json& root) {
  FieldPath path;
  const json* node = &root;
  while (!pointer.empty()) {
    const std::string token = takeToken(pointer);
    if (node && node->is_array()) {
      std::size_t index = 0;
      parseIndex(token, index);
      path = path.index(index);
      node = index < node->size() ? &(*node)[index] : nullptr;
      continue;
    }
    path = isIdentifier(token) ? path.field(token) : path.key(token);
    const json* next = nullptr;
    if (node && node->is_object()) {
      const auto it = node->find(token);
      if (it != node->end()) next = &*it;
    }
    node = next;
  }
  return path.apiPath();
}

}  // namespace gpuguard
