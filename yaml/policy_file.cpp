#include "yaml/policy_file.h"

#include <array>
#include <fstream>
#include <sstream>

#include "rules/policy_json.h"
#include "rules/registry.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml {

namespace {

// The top-level keys read here rather than by Policy.
constexpr std::array<std::string_view, 7> kFrontEndKeys{"exemptions", "allowSuppressions", "exemptNamespaces",
                                                        "mutate",     "include",           "exclude",
                                                        "judgeChildrenAtOwner"};

// The registry decides which rule ids exist: the engine's readers check
// shapes only (rules/policy.h KnownRule).
bool isRegisteredRule(std::string_view id) { return findRule(id) != nullptr; }

// `mutate:` names rules (an empty list mutates nothing); a typo would
// silently fix nothing, so it is an error.
std::vector<std::string> ruleIdList(const nlohmann::json& v, std::string_view source, std::string_view key) {
  if (!v.is_array()) policy_json::fail(source, key, "must be a list of rule ids, got " + policy_json::typeName(v));
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < v.size(); ++i) ids.push_back(policy_json::ruleId(v[i], source, policy_json::entryKey(key, i), isRegisteredRule));
  return ids;
}

}  // namespace

PolicyDocument PolicyDocument::fromJson(const nlohmann::json& doc, std::string_view source, std::string_view platform) {
  PolicyDocument d;
  d.engine = Policy::fromJson(doc, source, platform, kFrontEndKeys, isRegisteredRule);  // also rejects what nobody reads
  if (!doc.is_object()) return d;  // null: an empty file, the defaults
  for (const auto& [key, v] : doc.items()) {
    if (key == "exemptions") d.exemptions = Exemptions::fromJson(v, source, isRegisteredRule);
    else if (key == "allowSuppressions") d.allowSuppressions = policy_json::boolean(v, source, key);
    else if (key == "exemptNamespaces") d.exemptNamespaces = policy_json::stringList(v, source, key);
    else if (key == "judgeChildrenAtOwner") d.judgeChildrenAtOwner = policy_json::boolean(v, source, key);
    else if (key == "mutate") d.mutate = ruleIdList(v, source, key);
    else if (key == "include") d.include = policy_json::stringList(v, source, key);
    else if (key == "exclude") d.exclude = policy_json::stringList(v, source, key);
  }
  return d;
}

PolicyDocument parsePolicy(std::string_view text, const std::string& source, std::string_view platform) {
  ParseResult parsed = parseStream(text);
  if (parsed.error) {
    throw PolicyError(source + ":" + std::to_string(parsed.error->position.line) + ":" +
                      std::to_string(parsed.error->position.column) + ": " + parsed.error->message);
  }
  if (parsed.documents.size() > 1) throw PolicyError(source + ": must hold a single YAML document");
  return PolicyDocument::fromJson(parsed.documents.empty() ? nlohmann::json() : parsed.documents.front().value,
                                  source, platform);
}

PolicyDocument loadPolicyFile(const std::string& path, std::string_view platform) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PolicyError(path + ": cannot read policy file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parsePolicy(buf.str(), path, platform);
}

}  // namespace gpuguard::yaml
