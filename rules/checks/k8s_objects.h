// Small helpers for checks that judge whole Kubernetes objects by kind
// (DaemonSet, ResourceClaimTemplate, Karpenter NodePool) rather than the pod
// sites the engine finds: the object itself or, in a `kind: List`, each item.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/field_path.h"

namespace gpuguard::checks {

// The string at obj[name], or nullptr when absent or not a string.
inline const std::string* stringAt(const nlohmann::json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// obj[name] when it is an object (objectAt) or an array (arrayAt), else nullptr.
inline const nlohmann::json* objectAt(const nlohmann::json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}
inline const nlohmann::json* arrayAt(const nlohmann::json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it != obj.end() && it->is_array() ? &*it : nullptr;
}

inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Calls fn(object, path) for `root` and, when it is a `kind: List`, for each
// object item (kubectl get -o yaml output). Nested Lists are not expanded.
template <typename Fn>
void forEachObject(const nlohmann::json& root, Fn&& fn) {
  if (!root.is_object()) return;
  fn(root, FieldPath{});
  const std::string* kind = stringAt(root, "kind");
  const nlohmann::json* items = arrayAt(root, "items");
  if (!kind || *kind != "List" || !items) return;
  const FieldPath itemsPath = FieldPath{}.field("items");
  for (std::size_t i = 0; i < items->size(); ++i) {
    if ((*items)[i].is_object()) fn((*items)[i], itemsPath.index(i));
  }
}

}  // namespace gpuguard::checks
