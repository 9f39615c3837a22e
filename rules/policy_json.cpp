#include "rules/policy_json.h"

namespace gpuguard::policy_json {

using nlohmann::json;

void fail(std::string_view source, std::string_view key, std::string_view what) {
  throw PolicyError(std::string(source) + ": " + std::string(key) + ": " + std::string(what));
}

std::string typeName(const json& v) { return v.is_null() ? "null" : v.type_name(); }

std::string entryKey(std::string_view key, std::size_t index) {
  return std::string(key) + "[" + std::to_string(index) + "]";
}

const std::string& string(const json& v, std::string_view source, std::string_view key) {
  if (!v.is_string()) fail(source, key, "must be a string, got " + typeName(v));
  return v.get_ref<const std::string&>();
}

std::vector<std::string> stringList(const json& v, std::string_view source, std::string_view key) {
  if (!v.is_array()) fail(source, key, "must be a list of strings, got " + typeName(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], source, entryKey(key, i)));
  return out;
}

bool boolean(const json& v, std::string_view source, std::string_view key) {
  if (!v.is_boolean()) fail(source, key, "must be true or false, got " + typeName(v));
  return v.get<bool>();
}

Pattern pattern(const json& v, std::string_view source, std::string_view key) {
  const std::string& text = string(v, source, key);
  try {
    return Pattern(text);
  } catch (const PatternError& e) {
    fail(source, key, json(text).dump() + ": " + e.what() + " (RE2 syntax, matched against the whole string)");
  }
}

std::string ruleId(const json& v, std::string_view source, std::string_view key, const KnownRule& knownRule) {
  const std::string& id = string(v, source, key);
  if (knownRule && !knownRule(id)) fail(source, key, "unknown rule id \"" + id + "\" (see gpuguard-lint --list-rules)");
  return id;
}

}  // namespace gpuguard::policy_json
