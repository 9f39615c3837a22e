// Node taints and pod tolerations (k8s.io/api/core/v1 Taint and Toleration).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuguard {

struct Taint {
  std::string key;
  std::optional<std::string> value;  // nullopt: the node's value is unknown, any value
  std::string effect;                // NoSchedule, PreferNoSchedule, NoExecute
};

// Toleration.ToleratesTaint. A taint whose value is unknown (nullopt) is only
// tolerated by operator Exists.
bool toleratesTaint(const nlohmann::json& toleration, const Taint& taint);

// Taint.ToString: "key=value:effect", or "key:effect" without a value.
std::string describeTaint(const Taint& taint);

}  // namespace gpuguard
