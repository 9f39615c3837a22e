#include "audit/facts_sensitive.h"

#include <string>

#include "rules/gpu_use.h"
#include "rules/input_facts.h"
#include "rules/pod_specs.h"

namespace gpuguard::audit {

bool factsSensitive(const nlohmann::json& object, const Policy& policy, const ClusterFacts* cluster) {
  if (!object.is_object()) return false;
  const std::string kind = object.value("kind", nlohmann::json()).is_string() ? object["kind"].get<std::string>() : "";
  if (kind == "DaemonSet" || kind == "LimitRange" || kind == "NodePool") return true;
  const nlohmann::json meta = object.value("metadata", nlohmann::json::object());
  const std::string ns = meta.is_object() && meta.value("namespace", nlohmann::json()).is_string()
                             ? meta["namespace"].get<std::string>()
                             : "default";
  const InputFacts none;
  const GpuFacts gpu{policy, none, cluster, ns};
  for (const PodSite& site : findPodSites(object)) {
    if (site.resourceClaims.value != nullptr || usesGpus(site, gpu)) return true;
  }
  return false;
}

}  // namespace gpuguard::audit
