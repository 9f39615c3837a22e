// Spark operator: a SparkApplication's driver and executor are pods and their
// containers at once, with the GPU count in gpu {name, quantity}.
#include "rules/pods/walker.h"

namespace gpuguard::pods {

using nlohmann::json;

// A SparkApplication's spec.driver or spec.executor (a ScheduledSparkApplication's
// under spec.template): a SparkPodSpec, the pod and its container at once.
bool Walker::isSparkPod(const json& node, std::string_view via) const {
  if (!node.is_object() || (via != "driver" && via != "executor") || chain.empty()) return false;
  const json* spec = memberOf(ownerObject(), "spec");
  if (ownerIs("SparkApplication", "sparkoperator.k8s.io/")) return chain.back().node == spec;
  if (ownerIs("ScheduledSparkApplication", "sparkoperator.k8s.io/")) {
    return chain.back().node == memberOf(spec, "template");
  }
  return false;
}

// gpu {name, quantity} becomes the pod's limit of that resource
// (kubeflow/spark-operator GPUSpec); scheduling fields are the
// SparkPodSpec's own, or the application's nodeSelector.
void Walker::addSparkPod(const json& pod, const FieldPath& path) {
  PodSite site = newSite(pod, path);
  ContainerRef ref{&pod, path, ContainerKind::Lone};
  auto resources = std::make_shared<OperatorResources>();
  resources->path = path.field("gpu");
  const json* gpu = memberOf(&pod, "gpu");
  const json* name = memberOf(gpu, "name");
  const json* quantity = memberOf(gpu, "quantity");
  if (name && name->is_string() && quantity) {
    resources->entries.push_back({name->get<std::string>(), quantity, resources->path.field("quantity"), true});
  }
  ref.fromOperator = std::move(resources);
  site.containers.push_back(std::move(ref));
  site.nodeSelector = nearest(pod, path, "nodeSelector");
  site.affinity = fieldOf(pod, path, "affinity");
  site.tolerations = fieldOf(pod, path, "tolerations");
  sites.push_back(std::move(site));
}

}  // namespace gpuguard::pods
