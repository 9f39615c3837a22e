// One Kubernetes object in, the record the cluster facts keep of it out
// (rules/cluster_facts.h): only what the rules read, so a cache of 5,000
// nodes holds labels, taints and resources, not managedFields and images.
// Pure functions; what they cannot read is appended to `warnings` and
// otherwise ignored (a node with a capacity that does not parse keeps the
// rest). The DRA kinds reduce with input_facts.h (reduceDeviceClass...).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"

namespace gpuguard {

// core/v1 Node: metadata.labels, spec.taints, spec.unschedulable,
// status.capacity, status.allocatable.
NodeFacts reduceNode(const nlohmann::json& node, std::vector<std::string>& warnings);

// karpenter.sh/v1 NodePool: spec.template.metadata.labels,
// spec.template.spec.{requirements,taints,startupTaints}, spec.limits.
NodePoolFacts reduceNodePool(const nlohmann::json& nodePool, std::vector<std::string>& warnings);

// core/v1 Namespace: metadata.labels, the
// scheduler.alpha.kubernetes.io/defaultTolerations annotation and the node
// selector annotations (NamespaceFacts::nodeSelector).
NamespaceFacts reduceNamespace(const nlohmann::json& ns, std::vector<std::string>& warnings);

// node.k8s.io RuntimeClass: scheduling.nodeSelector and scheduling.tolerations
// (nothing when it has no scheduling, as the GPU Operator's `nvidia` class).
RuntimeClassFacts reduceRuntimeClass(const nlohmann::json& runtimeClass);

// resource.k8s.io ResourceSlice (v1, v1beta2, v1beta1 alike): spec.driver,
// spec.nodeName and how many devices spec.devices lists.
ResourceSliceFacts reduceResourceSlice(const nlohmann::json& slice);

inline constexpr const char* kDefaultTolerationsAnnotation = "scheduler.alpha.kubernetes.io/defaultTolerations";
inline constexpr const char* kNodeSelectorAnnotation = "scheduler.alpha.kubernetes.io/node-selector";
inline constexpr const char* kOpenShiftNodeSelectorAnnotation = "openshift.io/node-selector";

}  // namespace gpuguard
