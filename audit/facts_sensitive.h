// Which objects the cluster facts can change the findings of: a pod that
// asks for GPUs (its nodes, taints, driver labels, NodePools decide) or has
// DRA claims (the cluster's claims and DeviceClasses resolve them), and the
// kinds the facts are read against whole (a DaemonSet lands on every node it
// tolerates, a LimitRange defaults a namespace's pods, a NodePool launches
// the nodes). Only these are judged again when the facts change.
#pragma once

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/policy.h"

namespace gpuguard::audit {

// With `cluster` (may be null) deciding which DRA classes are GPUs, as the
// rules would.
bool factsSensitive(const nlohmann::json& object, const Policy& policy, const ClusterFacts* cluster);

}  // namespace gpuguard::audit
