#include "rules/pod_constraints.h"

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/pod_admission.h"
#include "rules/resources.h"

namespace gpuguard {

using nlohmann::json;

bool bypassesScheduler(const PodSite& site) {
  if (!site.spec || !site.spec->is_object()) return false;
  const auto nodeName = site.spec->find("nodeName");
  return nodeName != site.spec->end() && nodeName->is_string() && !nodeName->get_ref<const std::string&>().empty();
}

namespace {

constexpr std::string_view kQueueName = "kueue.x-k8s.io/queue-name";

const std::string* queueNameIn(const json& node) {
  if (!node.is_object()) return nullptr;
  const auto metadata = node.find("metadata");
  if (metadata == node.end() || !metadata->is_object()) return nullptr;
  for (const char* map : {"labels", "annotations"}) {
    const auto entries = metadata->find(map);
    if (entries == metadata->end() || !entries->is_object()) continue;
    const auto queue = entries->find(kQueueName);
    if (queue != entries->end() && queue->is_string() && !queue->get_ref<const std::string&>().empty()) {
      return &queue->get_ref<const std::string&>();
    }
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> kueueQueueName(const json& object, const PodSite& site) {
  // The objects from the root down to the pod spec, found in one walk along
  // its path (not a JSON pointer looked up again from the root per level).
  const std::vector<FieldPath::Step> steps = site.specPath.segments();
  std::vector<const json*> chain{&object};
  for (const FieldPath::Step& step : steps) {
    const json* next = stepInto(*chain.back(), step);
    if (!next) break;
    chain.push_back(next);
  }
  // From the pod spec up to the root (the template, the workload, a List
  // item), at most 64 levels.
  const std::size_t lowest = steps.size() >= 64 ? steps.size() - 63 : 0;
  for (std::size_t level = steps.size() + 1; level-- > lowest;) {
    if (level >= chain.size()) continue;  // not in the object
    if (const std::string* queue = queueNameIn(*chain[level])) return *queue;
  }
  return std::nullopt;
}

std::vector<Taint> untoleratedGpuTaints(const PodSite& site, const Policy& policy) {
  std::vector<Taint> missing;
  if (site.tolerations.opaque) return missing;  // decided at run time (an Argo podSpecPatch)
  // The kubelet admits a pod with spec.nodeName against NoExecute taints only
  // (lifecycle/predicate.go generalFilter): NoSchedule is the scheduler's.
  const bool kubeletOnly = bypassesScheduler(site);
  for (const Taint& taint : policy.gpuTaints) {
    // The TaintToleration filter skips PreferNoSchedule: it only scores.
    if (taint.effect == "PreferNoSchedule") continue;
    if (kubeletOnly && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    if (const json* tolerations = admittedTolerations(site); tolerations && tolerations->is_array()) {
      for (const json& t : *tolerations) tolerated = tolerated || toleratesTaint(t, taint);
    }
    // ExtendedResourceToleration adds {key: <resource>, Exists, NoSchedule}
    // for each extended resource a Pod requests.
    if (!tolerated && policy.assumeExtendedResourceToleration && taint.effect == "NoSchedule") {
      for (const ContainerRef& c : site.containers) {
        const ContainerResources& r = resourcesOf(c, true);
        if (r.request(taint.key) || r.limit(taint.key)) tolerated = true;
      }
    }
    if (!tolerated) missing.push_back(taint);
  }
  return missing;
}

bool placementOpaque(const PodSite& site) {
  return site.tolerations.opaque || site.nodeSelector.opaque || site.affinity.opaque;
}

std::string misplacedNote(const PodField& misplaced, const PodField& proper) {
  if (!misplaced.value) return "";
  return "; " + misplaced.path.apiPath() +
         " does not count: it is written where the API has no such field, and is dropped; move it to " +
         proper.path.apiPath();
}

const std::vector<NodeTerm>& nodeSelectionTerms(const PodSite& site) {
  if (!site.selectionTerms) {
    site.selectionTerms = std::make_shared<const std::vector<NodeTerm>>(
        nodeSelectionTerms(admittedNodeSelector(site), site.nodeSelector.path, site.affinity.value, site.affinity.path));
  }
  return *site.selectionTerms;
}

}  // namespace gpuguard
