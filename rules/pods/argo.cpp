// Argo Workflows: a template is the pod; its container, script or containerSet
// is the container (reference §14.14).
#include "rules/pods/walker.h"

namespace gpuguard::pods {

using nlohmann::json;

// Argo's containerSet template: its containers run in one pod, whose
// tolerations, nodeSelector and affinity are the template's (or the
// Workflow's); ContainerSetTemplate itself has only containers,
// volumeMounts and retryStrategy.
void Walker::addContainerSet(const json& containerSet, const FieldPath& path) {
  PodSite site = newSite(containerSet, path);
  addContainers(site, containerSet, "containers", ContainerKind::App);
  site.nodeSelector = aroundHolder(path, "nodeSelector");
  site.affinity = aroundHolder(path, "affinity");
  site.tolerations = aroundHolder(path, "tolerations");
  site.misplaced = fieldsInside(containerSet, path);
  sites.push_back(std::move(site));
}

bool argoFieldHoldsContainer(std::string_view via) { return via == "script"; }

}  // namespace gpuguard::pods
