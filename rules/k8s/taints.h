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

// The fields of a Toleration the scheduler matches a taint with, read once
// (readToleration) where one pod's tolerations meet many taints. A field
// that is absent or not a string reads as "".
struct Toleration {
  std::string key;
  std::string op;  // operator: "" (Equal), Equal, Exists, Lt, Gt
  std::string value;
  std::string effect;
};

// A JSON toleration's fields; nullopt when it is not an object (such an
// entry tolerates nothing).
std::optional<Toleration> readToleration(const nlohmann::json& toleration);

// Toleration.ToleratesTaint. A taint whose value is unknown (nullopt) is only
// tolerated by operator Exists.
bool toleratesTaint(const Toleration& toleration, const Taint& taint);
bool toleratesTaint(const nlohmann::json& toleration, const Taint& taint);

// A taint that a controller puts on and takes off a node as its state
// changes (node.kubernetes.io/not-ready, .../unschedulable, the cloud
// provider's uninitialized, Karpenter's disruption, the cluster
// autoscaler's scale-down marks): it says the node is unwell or going, not
// which pods the node is for, so no pod is asked to tolerate it.
bool isNodeLifecycleTaint(const Taint& taint);

// Taint.ToString: "key=value:effect", or "key:effect" without a value.
std::string describeTaint(const Taint& taint);

}  // namespace gpuguard
