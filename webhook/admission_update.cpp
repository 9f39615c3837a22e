#include "webhook/admission_update.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

const json* memberOf(const json* node, std::string_view key) {
  if (!node || !node->is_object()) return nullptr;
  auto it = node->find(key);
  return it == node->end() || it->is_null() ? nullptr : &*it;
}

// The member that names a list element, as its controller merges on it:
// `name` (containers, volumes, env and most lists), else KubeRay's
// `groupName` (workerGroupSpecs of a RayCluster, a RayService's
// rayClusterConfig, a RayJob's rayClusterSpec: unique per cluster).
struct ElementName {
  std::string_view key;
  const std::string* value = nullptr;
};

ElementName nameOf(const json& element) {
  for (std::string_view key : {std::string_view("name"), std::string_view("groupName")}) {
    const json* name = memberOf(&element, key);
    if (name && name->is_string()) return {key, &name->get_ref<const std::string&>()};
  }
  return {};
}

// `pointer` is `prefix` or lies under it.
bool within(std::string_view pointer, std::string_view prefix) {
  return pointer == prefix || (pointer.substr(0, prefix.size()) == prefix && pointer.size() > prefix.size() &&
                               pointer[prefix.size()] == '/');
}

}  // namespace

const std::vector<std::size_t>& FindingIdentities::ordinals(const json& list) {
  auto [it, inserted] = ordinals_.try_emplace(&list);
  if (!inserted) return it->second;
  // Keyed by the naming member too: a `name` and a `groupName` of one value are different names.
  std::unordered_map<std::string, std::size_t> seen;
  it->second.reserve(list.size());
  for (const json& element : list) {
    const ElementName name = nameOf(element);
    it->second.push_back(name.value ? seen[std::string(name.key) + '=' + *name.value]++ : 0);
  }
  return it->second;
}

std::string FindingIdentities::of(const Finding& f) {
  std::string key = f.rule + '\n';
  const json* node = &object_;
  for (const FieldPath::Step& step : f.path.segments()) {
    if (step.kind != FieldPath::Step::Kind::Index) {
      key += '.';
      key += step.name;
      node = memberOf(node, step.name);
      continue;
    }
    const json* list = node && node->is_array() && step.index < node->size() ? node : nullptr;
    node = list ? &(*list)[step.index] : nullptr;
    const ElementName name = node ? nameOf(*node) : ElementName{};
    if (!name.value) {
      key += '[' + std::to_string(step.index) + ']';
      continue;
    }
    key += '[';
    key += name.key;
    key += '=' + *name.value + '#' + std::to_string(ordinals(*list)[step.index]) + ']';
  }
  return key;
}

std::unordered_set<std::string> preexistingIdentities(const std::vector<Finding>& oldFindings, const json& oldObject) {
  FindingIdentities identities(oldObject);
  std::unordered_set<std::string> out;
  for (const Finding& f : oldFindings) {
    if (!f.suppressed) out.insert(identities.of(f));
  }
  return out;
}

bool immutableOnUpdate(std::string_view group, std::string_view kind, const JsonEdit& edit) {
  const std::string target = edit.path.jsonPointer();
  if (group.empty() && kind == "Pod") {
    const bool addsToleration = edit.op == JsonEdit::Op::AddToList && target == "/spec/tolerations";
    return within(target, "/spec") && !addsToleration;
  }
  if (group == "batch" && kind == "Job") return within(target, "/spec/template");
  return false;
}

}  // namespace gpuguard::webhook
