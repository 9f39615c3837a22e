// An object's controller: the metadata.ownerReferences entry with
// controller: true (the API server allows at most one). Read by the webhook
// (a controller's child, webhook/admission_owner.h) and the linter's
// --pending (where a Pending pod's fix belongs, lint/cluster_pending.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "rules/k8s/json_access.h"

namespace gpuguard {

// The first ownerReference whose controller is true, or nullptr.
inline const nlohmann::json* controllerReference(const nlohmann::json& object) {
  const nlohmann::json* metadata = member(object, "metadata");
  const nlohmann::json* refs = metadata ? arrayAt(*metadata, "ownerReferences") : nullptr;
  if (!refs) return nullptr;
  for (const nlohmann::json& ref : *refs) {
    const nlohmann::json* controller = member(ref, "controller");
    if (controller && controller->is_boolean() && controller->get<bool>()) return &ref;
  }
  return nullptr;
}

}  // namespace gpuguard
