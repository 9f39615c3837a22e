// NVIDIA NIM operator: a NIMService's spec is its pod and main container at
// once; its GPUs come from spec.resources or, through DRA, from
// spec.draResources, which the operator turns into the pod's resourceClaims
// and the main container's resources.claims (k8s-nim-operator
// api/apps/v1alpha1/nimservice_types.go: "Any DRA claim references [in
// resources] are ignored. Use DRAResources instead").
#include "rules/pods/walker.h"

namespace gpuguard::pods {

using nlohmann::json;

bool Walker::isNimServiceSpec(const json& node) const {
  return ownerIs("NIMService", "apps.nvidia.com/") && &node == memberOf(ownerObject(), "spec");
}

// The pod the operator builds: a lone container with the spec's own
// scheduling fields, its draResources standing for the pod's resourceClaims
// (each entry names a claim or a template, or has the operator create one
// from its claimCreationSpec; rules/gpu_use.cpp reads both shapes).
void Walker::addNimService(const json& spec, const FieldPath& path) {
  const char* resourcesKey = loneContainerResourcesKey(spec);
  const json* draResources = memberOf(&spec, "draResources");
  const bool asksDra = draResources && draResources->is_array() && !draResources->empty();
  if (!resourcesKey && !asksDra) return;  // nothing asked: no pod worth judging, as for any lone container
  addLoneContainer(spec, path, resourcesKey ? resourcesKey : "resources", "spec");
  sites.back().resourceClaims = fieldOf(spec, path, "draResources");
}

}  // namespace gpuguard::pods
