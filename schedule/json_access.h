// Reading the snapshot's JSON, shared by schedule/*.cpp (not part of the
// library's interface): absent and null members read as "not set", and
// values are shown as a user wrote them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::schedule::detail {

// obj[name], or nullptr when obj is not an object or the member is absent or null.
inline const nlohmann::json* member(const nlohmann::json& obj, const char* name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// obj[name] when it is a string, else "".
inline std::string stringAt(const nlohmann::json& obj, const char* name) {
  const nlohmann::json* v = member(obj, name);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// A label or selector value as text: strings as written, anything else as
// JSON (the API server would reject it; a controller that stringifies it sees this).
inline std::string valueText(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

inline std::string joined(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

}  // namespace gpuguard::schedule::detail
