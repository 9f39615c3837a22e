// Argo Workflows: a template is the pod; its container, script or containerSet
// is the container (reference §14.14); spec.templateDefaults is merged into
// every template.
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

std::optional<PodField> Walker::argoTemplateDefault(const json& holder, const PathTrail& holderPath, const char* name) {
  const json* defaults = memberOf(&holder, "templateDefaults");
  const json* value = memberOf(defaults, name);
  if (!value || value->is_null()) return std::nullopt;
  return PodField{value, holderPath.toFieldPath().field("templateDefaults").field(name)};
}

bool argoFieldHoldsContainer(std::string_view via) { return via == "script"; }

}  // namespace gpuguard::pods
