#include "rules/pod_specs.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "rules/pods/walker.h"

// The generic walk; the operator adapters are beside it in rules/pods/.
namespace gpuguard::pods {

using nlohmann::json;

bool Walker::isKubernetesObject(const json& node) {
  auto kind = node.find("kind");
  if (kind == node.end() || !kind->is_string()) return false;
  auto apiVersion = node.find("apiVersion");
  return apiVersion != node.end() && apiVersion->is_string();
}

bool Walker::holdsNoPods(const json& object) {
  const std::string& apiVersion = object["apiVersion"].get_ref<const std::string&>();
  const std::string& kind = object["kind"].get_ref<const std::string&>();
  const std::string_view group = std::string_view(apiVersion).substr(0, apiVersion.find('/'));
  if (group == "kyverno.io" || group.ends_with(".kyverno.io") || group.ends_with(".gatekeeper.sh") ||
      group == "karpenter.sh" || group.ends_with(".karpenter.sh")) {
    return true;
  }
  // Argo CD (argoproj.io shares its group with Argo Workflows, whose templates are pods).
  return group == "argoproj.io" && (kind == "Application" || kind == "ApplicationSet" || kind == "AppProject");
}

bool Walker::isPodSpec(const json& node) {
  auto containers = node.find("containers");
  if (containers == node.end() || !containers->is_array() || containers->empty()) return false;
  for (const json& c : *containers) {
    if (!c.is_object()) return false;
  }
  return true;
}

// The key of a ResourceRequirements object directly in `node`, if any.
const char* Walker::loneContainerResourcesKey(const json& node) {
  for (const char* key : {"resources", "resourcesPerNode"}) {
    auto resources = node.find(key);
    if (resources == node.end() || !resources->is_object()) continue;
    auto limits = resources->find("limits");
    auto requests = resources->find("requests");
    if ((limits != resources->end() && limits->is_object()) ||
        (requests != resources->end() && requests->is_object())) {
      return key;
    }
  }
  return nullptr;
}

PodField Walker::fieldOf(const json& holder, const FieldPath& path, const char* name) {
  auto it = holder.find(name);
  return {it == holder.end() || it->is_null() ? nullptr : &*it, path.field(name)};
}

void Walker::addContainers(PodSite& site, const json& spec, const char* listName, ContainerKind kind) {
  auto list = spec.find(listName);
  if (list == spec.end() || !list->is_array()) return;
  const FieldPath listPath = site.specPath.field(listName);
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& c = (*list)[i];
    if (!c.is_object()) continue;
    ContainerKind k = kind;
    if (kind == ContainerKind::Init) {
      auto policy = c.find("restartPolicy");
      if (policy != c.end() && policy->is_string() && *policy == "Always") k = ContainerKind::Sidecar;
    }
    site.containers.push_back({&c, listPath.index(i), k});
  }
}

PodSite Walker::newSite(const json& spec, const FieldPath& path) const {
  PodSite site;
  site.specPath = path;
  site.spec = &spec;
  if (ownerKind) site.ownerKind = *ownerKind;
  if (ownerApiVersion) site.ownerApiVersion = *ownerApiVersion;
  site.podsInGroup = groupSize;
  site.inRayClusterSpec = inRayGroup;
  return site;
}

void Walker::addPodSpec(const json& spec, const FieldPath& path) {
  PodSite site = newSite(spec, path);
  if (inKnativeServing()) site.placementHint = knativePlacementHint();
  // Only a Pod's own spec is defaulted by the API server (limits -> requests).
  site.isPod = &spec == specOfPod;
  addContainers(site, spec, "initContainers", ContainerKind::Init);
  addContainers(site, spec, "containers", ContainerKind::App);
  addContainers(site, spec, "ephemeralContainers", ContainerKind::Ephemeral);
  setPodFields(site, spec, path);
  openToBaseConfigs(site);
  addManagedDraClaim(site, spec);
  sites.push_back(std::move(site));
}

// The pod-level fields of a PodSpec.
void Walker::setPodFields(PodSite& site, const json& spec, const FieldPath& path) {
  site.nodeSelector = fieldOf(spec, path, "nodeSelector");
  site.affinity = fieldOf(spec, path, "affinity");
  site.tolerations = fieldOf(spec, path, "tolerations");
  site.resourceClaims = fieldOf(spec, path, "resourceClaims");
  site.podResources = fieldOf(spec, path, "resources");
}

// The innermost enclosing object that sets `name` (the node being walked
// not included), without leaving the enclosing Kubernetes object.
std::optional<PodField> Walker::inherited(const char* name) const {
  const bool argo = ownerGroup() == "argoproj.io";
  if (argo && chain.size() > ownerChainIndex) {
    if (std::optional<PodField> patched = argoPodSpecPatch(name)) return patched;
  }
  for (std::size_t i = chain.size(); i-- > ownerChainIndex;) {
    const json& ancestor = *chain[i].node;
    // Argo merges spec.templateDefaults into every template before the
    // workflow-level fields apply (argo-workflows docs/template-defaults.md).
    if (argo) {
      if (std::optional<PodField> byDefault = argoTemplateDefault(ancestor, *chain[i].path, name)) return byDefault;
    }
    auto it = ancestor.find(name);
    if (it != ancestor.end() && !it->is_null()) return PodField{&*it, chain[i].path->toFieldPath().field(name)};
  }
  return std::nullopt;
}

// The nearest enclosing object (the holder itself first) that sets `name`.
PodField Walker::nearest(const json& holder, const FieldPath& holderPath, const char* name) const {
  PodField own = fieldOf(holder, holderPath, name);
  if (own.value) return own;
  return inherited(name).value_or(own);  // absent: report where the holder would carry it
}

// A pod-level field of something inside the pod-level object (an Argo
// containerSet or container, a KServe model): set by an enclosing object,
// or else to be written in the object right around it.
PodField Walker::aroundHolder(const FieldPath& holderPath, const char* name) const {
  if (std::optional<PodField> found = inherited(name)) return *found;
  if (chain.size() <= ownerChainIndex) return {nullptr, holderPath.field(name)};
  return {nullptr, chain.back().path->toFieldPath().field(name)};
}

// "argoproj.io" of "argoproj.io/v1alpha1"; "" for the core group or none.
std::string_view Walker::ownerGroup() const {
  if (!ownerApiVersion) return {};
  const std::string_view apiVersion = *ownerApiVersion;
  const auto slash = apiVersion.find('/');
  return slash == std::string_view::npos ? std::string_view{} : apiVersion.substr(0, slash);
}

// Whether the field `via` holds a Kubernetes Container (or a type that
// embeds one), which has no tolerations, nodeSelector or affinity: those of
// its pod are in the object around it. Other lone containers may carry them
// themselves (NIMService's spec is the container and the pod at once).
bool Walker::holdsAContainer(std::string_view via) const {
  if (via == "container" || via == "containers" || via == "initContainers" || via == "sidecars") return true;
  const std::string_view group = ownerGroup();
  if (group == "argoproj.io") return argoFieldHoldsContainer(via);
  // InferenceService predictors: ModelSpec and the framework predictors
  // (PredictorExtensionSpec) embed a Container; the PodSpec fields are the
  // predictor's own.
  if (group == "serving.kserve.io") return kserveFieldHoldsContainer(via);
  return false;
}

MisplacedFields Walker::fieldsInside(const json& container, const FieldPath& path) {
  return {fieldOf(container, path, "nodeSelector"), fieldOf(container, path, "affinity"),
          fieldOf(container, path, "tolerations")};
}

void Walker::addLoneContainer(const json& holder, const FieldPath& path, const char* resourcesKey, std::string_view via) {
  PodSite site = newSite(holder, path);
  site.containers.push_back({&holder, path, ContainerKind::Lone, resourcesKey});
  if (inTrainJob() && via == "trainer") {
    scheduleByPatches(site);
    site.misplaced = fieldsInside(holder, path);
  } else if (holdsAContainer(via)) {
    site.nodeSelector = aroundHolder(path, "nodeSelector");
    site.affinity = aroundHolder(path, "affinity");
    site.tolerations = aroundHolder(path, "tolerations");
    site.misplaced = fieldsInside(holder, path);
    openToServingRuntime(site, holder, path);
  } else {
    site.nodeSelector = nearest(holder, path, "nodeSelector");
    site.affinity = nearest(holder, path, "affinity");
    site.tolerations = nearest(holder, path, "tolerations");
  }
  sites.push_back(std::move(site));
}

const json* Walker::memberOf(const json* node, const char* key) {
  if (!node || !node->is_object()) return nullptr;
  auto it = node->find(key);
  return it == node->end() ? nullptr : &*it;
}

const json* Walker::ownerObject() const { return chain.size() > ownerChainIndex ? chain[ownerChainIndex].node : nullptr; }

bool Walker::ownerIs(std::string_view kind, std::string_view apiVersionPrefix) const {
  return ownerKind && *ownerKind == kind && ownerApiVersion && ownerApiVersion->starts_with(apiVersionPrefix);
}

// Paths are made only for the pod specs and containers found (see PathTrail).
// `via` is the field holding the node, or holding the list it is an item of.
void Walker::walk(const json& node, const PathTrail& path, std::string_view via, int depth) {
  if (depth > kMaxDepth) return;
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], path.index(i), via, depth + 1);
    return;
  }
  if (!node.is_object()) return;

  const std::string* savedKind = ownerKind;
  const std::string* savedApiVersion = ownerApiVersion;
  const json* savedSpecOfPod = specOfPod;
  const std::size_t savedOwnerIndex = ownerChainIndex;
  const std::optional<long long> savedGroupSize = groupSize;
  const bool savedRayGroup = inRayGroup;
  // Policies and deploy tools hold pod-shaped patterns, parameters and Helm
  // values, not pods: nothing in them runs (Kyverno's `nvidia.com/gpu: "?*"`).
  if (isKubernetesObject(node) && holdsNoPods(node)) return;
  if (isKubernetesObject(node)) {
    groupSize = node["kind"] == "LeaderWorkerSet" ? lwsGroupSize(node) : std::nullopt;
    ownerKind = &node["kind"].get_ref<const std::string&>();
    ownerApiVersion = &node["apiVersion"].get_ref<const std::string&>();
    auto spec = node.find("spec");
    specOfPod = *ownerKind == "Pod" && *ownerApiVersion == "v1" && spec != node.end() ? &*spec : nullptr;
    ownerChainIndex = chain.size();
    inRayGroup = false;
  }

  if (isDynamoService(node)) {
    // Its pod is built from extraPodSpec: nothing inside is a pod of its own.
    addDynamoService(node, path.toFieldPath());
  } else if (isPodSpec(node)) {
    if (via == "containerSet") {
      addContainerSet(node, path.toFieldPath());
    } else {
      addPodSpec(node, path.toFieldPath());
    }
  } else {
    if (isSparkPod(node, via)) {
      addSparkPod(node, path.toFieldPath());
    } else if (isNimServiceSpec(node)) {
      addNimService(node, path.toFieldPath());
    } else if (const char* key = loneContainerResourcesKey(node)) {
      addLoneContainer(node, path.toFieldPath(), key, via);
    }
    const bool rayGroupHere = inRayGroup;
    chain.push_back({&node, &path});
    // The map itself, not items(): no proxy per member; keys compared as
    // string_views, so most comparisons stop at the length.
    for (const auto& [name, child] : node.get_ref<const json::object_t&>()) {
      const std::string_view key = name;
      // Nothing a pod runs lives in metadata (managedFields can be large) or status.
      if (key == "metadata" || key == "status" || key == "resources" || key == "resourcesPerNode") continue;
      // A TrainJob's podSpecOverrides and runtimePatches hold partial pod
      // specs (containers by name, env and volumeMounts only), read for
      // the trainer instead.
      if ((key == "podSpecOverrides" || key == "podTemplateOverrides" || key == "runtimePatches") && inTrainJob()) {
        continue;
      }
      if (!child.is_object() && !child.is_array()) continue;
      // KubeRay's RayClusterSpec, in whatever object embeds it (reference §14.11).
      inRayGroup = rayGroupHere || key == "headGroupSpec" || key == "workerGroupSpecs";
      walk(child, path.field(key), key, depth + 1);
    }
    chain.pop_back();
  }

  ownerKind = savedKind;
  ownerApiVersion = savedApiVersion;
  specOfPod = savedSpecOfPod;
  ownerChainIndex = savedOwnerIndex;
  groupSize = savedGroupSize;
  inRayGroup = savedRayGroup;
}

}  // namespace gpuguard::pods

namespace gpuguard {

using nlohmann::json;

std::string_view ContainerRef::name() const {
  auto it = container->find("name");
  return it != container->end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : "";
}

std::string_view ContainerRef::image() const {
  auto it = container->find("image");
  return it != container->end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : "";
}

std::vector<PodSite> findPodSites(const json& object) {
  pods::Walker w;
  w.walk(object, PathTrail{}, {}, 0);
  return std::move(w.sites);
}

}  // namespace gpuguard
