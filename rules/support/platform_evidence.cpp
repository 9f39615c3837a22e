#include "rules/support/platform_evidence.h"

#include <array>
#include <utility>

#include "rules/k8s/json_access.h"
#include "rules/k8s/node_selection.h"
#include "rules/k8s/taints.h"
#include "rules/pod_constraints.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

struct LabelOwner {
  std::string_view prefix;
  std::string_view platform;
  std::string_view title;
};

// Label prefixes only the platform's own node provisioning sets.
constexpr std::array<LabelOwner, 4> kOwners{{
    {"cloud.google.com/gke-", "gke", "GKE"},
    {"eks.amazonaws.com/", "eks", "EKS"},
    {"kubernetes.azure.com/", "aks", "AKS"},
    {"karpenter.azure.com/", "aks", "AKS"},
}};

const LabelOwner* ownerOf(std::string_view key) {
  for (const LabelOwner& owner : kOwners) {
    if (key.starts_with(owner.prefix)) return &owner;
  }
  return nullptr;
}

// A requirement only nodes carrying the label meet.
bool requiresLabel(const NodeRequirement& r) { return r.op == "In" || r.op == "Exists"; }

// A platform label every ORed term requires (one term may name it and
// another not: then the pod may land elsewhere, and nothing is named).
std::optional<PlatformEvidence> requiredPlatformLabel(const PodSite& site) {
  std::optional<PlatformEvidence> found;
  bool anyTerm = false;
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    if (term.matchesNothing) continue;
    anyTerm = true;
    std::optional<PlatformEvidence> here;
    for (const NodeRequirement& r : term.requirements) {
      const LabelOwner* owner = requiresLabel(r) ? ownerOf(r.key) : nullptr;
      if (owner) {
        here = PlatformEvidence{owner->platform, owner->title,
                                describeRequirement(r, term) + ", a label only " + std::string(owner->title) +
                                    " puts on its nodes"};
        break;
      }
    }
    if (!here || (found && found->platform != here->platform)) return std::nullopt;
    if (!found) found = std::move(here);
  }
  return anyTerm ? found : std::nullopt;
}

}  // namespace

std::optional<PlatformEvidence> platformNamedBy(const PodSite& site) {
  if (std::optional<PlatformEvidence> label = requiredPlatformLabel(site)) return label;
  const json* tolerations = site.tolerations.value;
  if (!tolerations || !tolerations->is_array()) return std::nullopt;
  // AKS's GPU node pool docs taint with sku=gpu:NoSchedule (reference §14.17).
  const Taint aksGpuTaint{"sku", "gpu", "NoSchedule"};
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const json& t = (*tolerations)[i];
    const std::string* key = t.is_object() ? stringAt(t, "key") : nullptr;
    if (key && *key == "sku" && toleratesTaint(t, aksGpuTaint)) {
      return PlatformEvidence{"aks", "AKS",
                              "the toleration " + site.tolerations.path.index(i).apiPath() +
                                  " of sku=gpu:NoSchedule, the GPU node taint AKS's docs prescribe"};
    }
  }
  return std::nullopt;
}

std::optional<PlatformEvidence> platformOfNodes(const std::vector<std::string>& nodes, const ClusterFacts& cluster) {
  std::optional<PlatformEvidence> found;
  for (const std::string& name : nodes) {
    const NodeFacts* node = cluster.node(name);
    if (!node) return std::nullopt;
    const LabelOwner* owner = nullptr;
    std::string label;
    for (const auto& [key, value] : node->labels) {
      if ((owner = ownerOf(key))) {
        label = key + "=" + value;
        break;
      }
    }
    if (!owner || (found && found->platform != owner->platform)) return std::nullopt;
    if (!found) {
      found = PlatformEvidence{owner->platform, owner->title,
                               "node " + name + "'s label " + label + ", which only " + std::string(owner->title) +
                                   " puts on its nodes"};
    }
  }
  return found;
}

bool toleratedOnPlatform(const PodSite& site, const Policy& policy, std::string_view platform,
                         std::vector<Taint> taints) {
  Policy there = asOnPlatform(policy, platform);
  there.gpuTaints = std::move(taints);
  return untoleratedGpuTaints(site, there).empty();
}

Policy asOnPlatform(const Policy& policy, std::string_view platform) {
  Policy on = policy;
  if (const PlatformPreset* preset = findPlatformPreset(platform)) {
    preset->apply(on);
    on.platform = std::string(platform);
  }
  return on;
}

}  // namespace gpuguard::checks
