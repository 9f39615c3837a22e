#include "rules/exemptions.h"

#include <algorithm>

#include "rules/policy_json.h"

namespace gpuguard {
namespace {

using nlohmann::json;

std::string metadataString(const json& object, const char* key) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  const auto value = metadata->find(key);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

bool matchesIfGiven(const std::optional<Pattern>& pattern, std::string_view value) {
  return !pattern || pattern->fullMatch(value);
}

bool everyImageMatches(const Pattern& pattern, const std::vector<std::string>& images) {
  return !images.empty() &&
         std::all_of(images.begin(), images.end(), [&](const std::string& image) { return pattern.fullMatch(image); });
}

Exemption readEntry(const json& entry, std::string_view source, const std::string& where, const KnownRule& knownRule) {
  if (!entry.is_object()) {
    policy_json::fail(source, where, "must be a map of namespace, kind, name, image, rules; got " +
                                         policy_json::typeName(entry));
  }
  Exemption e;
  for (const auto& [field, value] : entry.items()) {
    const std::string key = where + "." + field;
    if (field == "namespace") e.namespaceName = policy_json::pattern(value, source, key);
    else if (field == "kind") e.kind = policy_json::pattern(value, source, key);
    else if (field == "name") e.name = policy_json::pattern(value, source, key);
    else if (field == "image") e.image = policy_json::pattern(value, source, key);
    else if (field == "rules") {
      if (!value.is_array() || value.empty()) {
        policy_json::fail(source, key, "must be a non-empty list of rule ids (omit it to exempt from every rule)");
      }
      for (std::size_t i = 0; i < value.size(); ++i) {
        e.rules.push_back(policy_json::ruleId(value[i], source, policy_json::entryKey(key, i), knownRule));
      }
    } else {
      policy_json::fail(source, key, "unknown key (known: namespace, kind, name, image, rules)");
    }
  }
  if (!e.namespaceName && !e.kind && !e.name && !e.image) {
    policy_json::fail(source, where,
                      "names no object: give at least one of namespace, kind, name, image (an entry with "
                      "none would exempt every object; turn a rule off under rules: instead)");
  }
  return e;
}

}  // namespace

ExemptionSubject exemptionSubject(const json& object, const std::vector<PodSite>& sites,
                                  std::string_view namespaceName) {
  ExemptionSubject s;
  if (const auto kind = object.find("kind"); kind != object.end() && kind->is_string()) s.kind = kind->get<std::string>();
  s.namespaceName = namespaceName.empty() ? metadataString(object, "namespace") : std::string(namespaceName);
  s.name = metadataString(object, "name");
  if (s.name.empty()) s.name = metadataString(object, "generateName");
  for (const PodSite& site : sites) {
    for (const ContainerRef& c : site.containers) s.images.emplace_back(c.image());
  }
  return s;
}

bool Exemption::exempts(std::string_view ruleId, const ExemptionSubject& s) const {
  if (!rules.empty() && std::find(rules.begin(), rules.end(), ruleId) == rules.end()) return false;
  return matchesIfGiven(namespaceName, s.namespaceName) && matchesIfGiven(kind, s.kind) &&
         matchesIfGiven(name, s.name) && (!image || everyImageMatches(*image, s.images));
}

Exemptions Exemptions::fromJson(const json& list, std::string_view source, const KnownRule& knownRule) {
  if (!list.is_array()) {
    policy_json::fail(source, "exemptions", "must be a list of {namespace, kind, name, image, rules}, got " +
                                                policy_json::typeName(list));
  }
  Exemptions out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.entries_.push_back(readEntry(list[i], source, policy_json::entryKey("exemptions", i), knownRule));
  }
  return out;
}

bool Exemptions::exempts(std::string_view ruleId, const ExemptionSubject& subject) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Exemption& e) { return e.exempts(ruleId, subject); });
}

}  // namespace gpuguard
