// Small helpers for checks that judge whole Kubernetes objects by kind
// (DaemonSet, ResourceClaimTemplate, Karpenter NodePool) rather than the pod
// sites the engine finds: the object itself or, in a `kind: List`, each item.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"
#include "rules/k8s/json_access.h"
#include "text/ascii.h"

namespace gpuguard::checks {

inline std::string lowercase(std::string_view s) { return text::asciiLowercase(s); }

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
