#include "rules/object_ref.h"

#include <algorithm>
#include <charconv>

#include "rules/k8s/field_path.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/json_pointer.h"

namespace gpuguard {
namespace {

using nlohmann::json;

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

// Tokens joined so that no two token lists join alike: each token after its length.
void appendToken(std::string& key, const std::string& token) {
  key += std::to_string(token.size());
  key += ':';
  key += token;
}

// A path's reference tokens, decoded (FieldPath::tokenOf of each step).
std::vector<std::string> tokensOf(const FieldPath& path) {
  std::vector<std::string> out;
  for (const FieldPath::Step& step : path.segments()) out.push_back(FieldPath::tokenOf(step));
  return out;
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

ObjectLocator::ObjectLocator(const json& document) : ObjectLocator(document, findPodSites(document)) {}

ObjectLocator::ObjectLocator(const json& document, const std::vector<PodSite>& sites) : document_(document) {
  specTokens_.reserve(sites.size());
  specByKey_.reserve(sites.size());
  for (const PodSite& site : sites) {
    specTokens_.push_back(tokensOf(site.specPath));
    std::string key;
    for (const std::string& token : specTokens_.back()) appendToken(key, token);
    specByKey_[std::move(key)] = specTokens_.size() - 1;  // the same path twice: the last one
  }
}

ObjectRef ObjectLocator::at(const FieldPath& path) const { return at(tokensOf(path)); }

ObjectRef ObjectLocator::at(std::string_view pointer) const {
  std::vector<std::string> tokens;
  for (JsonPointerTokens reader(pointer); !reader.done();) tokens.push_back(reader.next());
  return at(tokens);
}

ObjectRef ObjectLocator::at(const std::vector<std::string>& tokens) const {
  // Down through Lists (and Lists of Lists) to the item holding the finding.
  const json* object = &document_;
  std::string objectPointer;
  std::size_t depth = 0;  // tokens that lead to the object
  while (isList(*object) && depth + 1 < tokens.size() && tokens[depth] == "items") {
    std::size_t index = 0;
    if (!parseIndex(tokens[depth + 1], index) || index >= (*object)["items"].size()) break;
    objectPointer += "/items/" + std::to_string(index);
    object = &(*object)["items"][index];
    depth += 2;
  }
  ObjectRef ref = describe(*object, objectPointer);
  // The innermost pod spec whose path the finding's begins with: the longest
  // prefix of the finding's path that is a spec's, looked up by key (a scan
  // of every spec per finding made findings x pod specs work).
  std::vector<std::size_t> prefixEnds;  // the key's length after each token
  std::string key;
  for (const std::string& token : tokens) {
    appendToken(key, token);
    prefixEnds.push_back(key.size());
  }
  for (std::size_t length = tokens.size(); length > depth; --length) {
    key.resize(prefixEnds[length - 1]);  // from the longest prefix down
    const auto found = specByKey_.find(key);
    if (found == specByKey_.end()) continue;
    const std::vector<std::string>& spec = specTokens_[found->second];
    ref.podTemplate =
        FieldPath::fromTokens({spec.begin() + static_cast<std::ptrdiff_t>(depth), spec.end()}, *object).apiPath();
    break;
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
  return FieldPath::fromPointer(pointer, root).apiPath();
}

}  // namespace gpuguard
