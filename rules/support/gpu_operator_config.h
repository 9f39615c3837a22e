// What device-plugin-config judges beyond DaemonSets: the GPU Operator's
// ClusterPolicy, whose daemonsets.tolerations replace the tolerations of every
// operand DaemonSet, and the device plugin's sharing config, whose replicas
// must be at least 2 (kubernetes-gpu-semantics.md §9.5, §15.5).
#pragma once

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"
#include "rules/rule.h"

namespace gpuguard::checks {

// A ClusterPolicy (nvidia.com/v1) whose spec.daemonsets.tolerations leaves a
// GPU taint of the policy untolerated.
void checkClusterPolicy(const CheckContext& ctx, const nlohmann::json& object, const FieldPath& base, Reporter& out);

// A ConfigMap holding device plugin configs (data values with a sharing:
// timeSlicing or mps section) with a replicas value below 2.
void checkSharingConfigMap(const nlohmann::json& object, const FieldPath& base, Reporter& out);

}  // namespace gpuguard::checks
