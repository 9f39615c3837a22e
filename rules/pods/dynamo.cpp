// NVIDIA Dynamo: a DynamoGraphDeployment v1alpha1 service is a pod the operator
// builds, with its GPU count in the service's own resources.
#include "rules/pods/walker.h"

#include <cstdint>

namespace gpuguard::pods {

using nlohmann::json;

namespace {

// resources.{limits,requests}.gpu becomes nvidia.com/gpu; custom entries
// are resource names as they are (the operator's getResourcesConfig).
std::shared_ptr<const OperatorResources> dynamoResources(const json& service, const FieldPath& path) {
  auto out = std::make_shared<OperatorResources>();
  out->path = path.field("resources");
  for (const char* list : {"limits", "requests"}) {
    const json* entries = Walker::memberOf(Walker::memberOf(&service, "resources"), list);
    if (!entries || !entries->is_object()) continue;
    const FieldPath listPath = out->path.field(list);
    const bool limit = std::string_view(list) == "limits";
    if (const json* gpu = Walker::memberOf(entries, "gpu")) {
      out->entries.push_back({"nvidia.com/gpu", gpu, listPath.field("gpu"), limit});
    }
    const json* custom = Walker::memberOf(entries, "custom");
    if (!custom || !custom->is_object()) continue;
    for (const auto& [name, value] : custom->items()) {
      out->entries.push_back({name, &value, listPath.field("custom").key(name), limit});
    }
  }
  return out;
}
}  // namespace

// A DynamoGraphDeployment v1alpha1 service: an entry of spec.services.
bool Walker::isDynamoService(const json& node) const {
  return ownerIs("DynamoGraphDeployment", "nvidia.com/v1alpha1") && node.is_object() && !chain.empty() &&
         chain.back().node == memberOf(memberOf(ownerObject(), "spec"), "services");
}

// The operator builds the service's pod from extraPodSpec (a PodSpec) and
// its main container from extraPodSpec.mainContainer, with the service's
// resources; multinode.nodeCount pods run one replica.
void Walker::addDynamoService(const json& service, const FieldPath& path) {
  static const json kNone = json::object();
  const json* extra = memberOf(&service, "extraPodSpec");
  const json& podSpec = extra && extra->is_object() ? *extra : kNone;
  const FieldPath specPath = path.field("extraPodSpec");
  PodSite site = newSite(podSpec, specPath);
  const json* main = memberOf(&podSpec, "mainContainer");
  ContainerRef ref{main && main->is_object() ? main : &kNone, specPath.field("mainContainer"), ContainerKind::Lone};
  ref.fromOperator = dynamoResources(service, path);
  site.containers.push_back(std::move(ref));
  addContainers(site, podSpec, "initContainers", ContainerKind::Init);
  addContainers(site, podSpec, "containers", ContainerKind::App);
  setPodFields(site, podSpec, specPath);
  const json* nodeCount = memberOf(memberOf(&service, "multinode"), "nodeCount");
  if (nodeCount && nodeCount->is_number_integer() && nodeCount->get<std::int64_t>() > 1) {
    site.podsInGroup = nodeCount->get<std::int64_t>();
  }
  sites.push_back(std::move(site));
}

}  // namespace gpuguard::pods
