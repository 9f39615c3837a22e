// Reading members of decoded Kubernetes objects, the way the API server's
// decoder treats them: an absent member and a null one are both "not set",
// and a member of the wrong type is not the field the code looks for. One set
// of accessors for the checks, the scheduler replay and the front ends.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuguard {

// obj[name], or nullptr when obj is not an object or the member is absent or null.
inline const nlohmann::json* member(const nlohmann::json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// The string at obj[name], or nullptr when absent or not a string.
inline const std::string* stringAt(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = member(obj, name);
  return v && v->is_string() ? &v->get_ref<const std::string&>() : nullptr;
}

// The string at obj[name], or "" when absent or not a string.
inline std::string stringOr(const nlohmann::json& obj, std::string_view name) {
  const std::string* s = stringAt(obj, name);
  return s ? *s : std::string();
}

// obj[name] when it is an object (objectAt) or an array (arrayAt), else nullptr.
inline const nlohmann::json* objectAt(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = member(obj, name);
  return v && v->is_object() ? v : nullptr;
}
inline const nlohmann::json* arrayAt(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = member(obj, name);
  return v && v->is_array() ? v : nullptr;
}

// A label or selector value as text: strings as written, anything else as
// JSON (the API server would reject it; a controller that stringifies it sees this).
inline std::string valueText(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace gpuguard
