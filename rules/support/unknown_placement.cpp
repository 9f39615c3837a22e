#include "rules/support/unknown_placement.h"

#include <algorithm>
#include <string_view>

#include "rules/cluster_facts.h"
#include "rules/pod_admission.h"
#include "rules/pod_constraints.h"

namespace gpuguard::checks {
namespace {

constexpr std::string_view kNodePoolLabel = "karpenter.sh/nodepool";

bool knownNodePool(const ClusterFacts& cluster, std::string_view name) {
  if (!cluster.listed(FactKind::NodePool)) return false;
  const auto& pools = cluster.nodePools();
  return std::any_of(pools.begin(), pools.end(), [&](const auto& p) { return p->name == name; });
}

// The first NodePool a term requires (karpenter.sh/nodepool In [...]) that
// the facts do not hold. Only with the facts of the nodes: without them
// every verdict is the policy's, and names nothing of the cluster.
std::string unknownNodePool(const PodSite& site, const ClusterFacts* cluster) {
  if (!cluster || !cluster->listed(FactKind::Node)) return "";
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    for (const NodeRequirement& r : term.requirements) {
      if (r.key != kNodePoolLabel || r.op != "In") continue;
      for (const std::string& name : r.values) {
        if (!knownNodePool(*cluster, name)) return name;
      }
    }
  }
  return "";
}

}  // namespace

std::string unknownPlacement(const PodSite& site, const GpuFacts& gpu) {
  if (site.admitted && !site.admitted->unknownRuntimeClass.empty()) {
    return "RuntimeClass " + site.admitted->unknownRuntimeClass;
  }
  if (const std::string name = unknownNodePool(site, gpu.cluster); !name.empty()) return "NodePool " + name;
  return "";
}

std::string unknownNodePoolNote(const PodSite& site, const GpuFacts& gpu) {
  const std::string name = unknownNodePool(site, gpu.cluster);
  if (name.empty()) return "";
  return "; the pod's node selection requires Karpenter NodePool " + name + " (" + std::string(kNodePoolLabel) +
         "), which the cluster facts (" + gpu.cluster->source() +
         ") do not hold (yet): the nodes it launches, and their taints, are unknown, hence a warning";
}

}  // namespace gpuguard::checks
