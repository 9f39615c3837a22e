// Argo Workflows: a template is the pod; its container, script or containerSet
// is the container (reference §14.14); spec.templateDefaults is merged into
// every template, and podSpecPatch into every pod.
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

// Argo merges a podSpecPatch (a template's, then the Workflow's
// spec.podSpecPatch: a PodSpec fragment as YAML or JSON text, often with
// {{...}} parameters) into every pod it creates, after the fields written in
// the template. A patch that names the field, on the object being walked or
// any enclosing it within the workflow, decides it at run time: the field is
// opaque (PodField::opaque), so no rule reports it missing.
std::optional<PodField> Walker::argoPodSpecPatch(const char* name) const {
  for (std::size_t i = chain.size(); i-- > ownerChainIndex;) {
    const json* patch = memberOf(chain[i].node, "podSpecPatch");
    if (!patch || !patch->is_string()) continue;
    if (patch->get_ref<const std::string&>().find(name) == std::string::npos) continue;
    return PodField{patch, chain[i].path->toFieldPath().field("podSpecPatch"), true};
  }
  return std::nullopt;
}

std::optional<PodField> Walker::argoTemplateDefault(const json& holder, const PathTrail& holderPath, const char* name) {
  const json* defaults = memberOf(&holder, "templateDefaults");
  const json* value = memberOf(defaults, name);
  if (!value || value->is_null()) return std::nullopt;
  return PodField{value, holderPath.toFieldPath().field("templateDefaults").field(name)};
}

bool argoFieldHoldsContainer(std::string_view via) { return via == "script"; }

}  // namespace gpuguard::pods
