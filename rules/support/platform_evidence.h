// The managed platform a pod names for itself, for the findings whose verdict
// depends on the platform (gpu-missing-toleration): a node label only that
// platform puts on its nodes, required by every node-selection term, or the
// GPU-taint toleration its docs prescribe; with the cluster's facts, the label
// every GPU node of the verdict carries. Facts: kubernetes-gpu-semantics.md
// §14.17 (GKE, AKS, EKS rows).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/cluster_facts.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard::checks {

struct PlatformEvidence {
  std::string_view platform;  // a preset name: "gke", "aks", "eks"
  std::string_view title;     // "GKE"
  std::string what;           // "nodeSelector cloud.google.com/gke-accelerator=nvidia-l4"
};

// The platform the site's own fields name, or nullopt: a required node
// label of GKE (cloud.google.com/gke-*), EKS (eks.amazonaws.com/*) or AKS
// (kubernetes.azure.com/*, karpenter.azure.com/*), or a toleration of
// AKS's documented GPU taint sku=gpu. The first found wins.
std::optional<PlatformEvidence> platformNamedBy(const PodSite& site);

// The platform whose own label every one of `nodes` carries (GKE's
// cloud.google.com/gke-nodepool, EKS's eks.amazonaws.com/nodegroup, ...),
// or nullopt: with the cluster's facts, the nodes name the platform. Names
// not in `cluster` count as not carrying one.
std::optional<PlatformEvidence> platformOfNodes(const std::vector<std::string>& nodes, const ClusterFacts& cluster);

// Whether the pod at `site` tolerates every one of `taints` once the API
// server of `platform` has admitted it (its preset: GKE's and EKS's
// ExtendedResourceToleration adds {key: <resource>, Exists, NoSchedule} for
// each extended resource the pod requests).
bool toleratedOnPlatform(const PodSite& site, const Policy& policy, std::string_view platform,
                         std::vector<Taint> taints);

// `policy` as the platform's preset would make it (what `--platform NAME`
// gives when the policy file sets none of the preset's keys).
Policy asOnPlatform(const Policy& policy, std::string_view platform);

}  // namespace gpuguard::checks
