#include "rules/pod_specs.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>

namespace gpuguard {
namespace {

using nlohmann::json;

// Deeper than any real manifest; bounds the recursion on hostile input.
constexpr int kMaxDepth = 64;

struct Ancestor {
  const json* node;
  const PathTrail* path;  // lives on the walk's stack as long as the entry
};

struct Walker {
  std::vector<PodSite> sites;
  std::vector<Ancestor> chain;  // enclosing objects, outermost first
  // kind and apiVersion of the enclosing Kubernetes object (null: none yet);
  // pointers, so that saving and restoring them per node copies no string.
  const std::string* ownerKind = nullptr;
  const std::string* ownerApiVersion = nullptr;
  std::size_t ownerChainIndex = 0;
  const json* specOfPod = nullptr;  // spec of the enclosing v1 Pod, if the owner is one
  std::optional<long long> groupSize;  // pods per group of the enclosing LeaderWorkerSet

  static bool isKubernetesObject(const json& node) {
    auto kind = node.find("kind");
    if (kind == node.end() || !kind->is_string()) return false;
    auto apiVersion = node.find("apiVersion");
    return apiVersion != node.end() && apiVersion->is_string();
  }

  static bool isPodSpec(const json& node) {
    auto containers = node.find("containers");
    if (containers == node.end() || !containers->is_array() || containers->empty()) return false;
    for (const json& c : *containers) {
      if (!c.is_object()) return false;
    }
    return true;
  }

  // The key of a ResourceRequirements object directly in `node`, if any.
  static const char* loneContainerResourcesKey(const json& node) {
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

  static PodField fieldOf(const json& holder, const FieldPath& path, const char* name) {
    auto it = holder.find(name);
    return {it == holder.end() || it->is_null() ? nullptr : &*it, path.field(name)};
  }

  void addContainers(PodSite& site, const json& spec, const char* listName, ContainerKind kind) {
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

  PodSite newSite(const json& spec, const FieldPath& path) const {
    PodSite site;
    site.specPath = path;
    site.spec = &spec;
    if (ownerKind) site.ownerKind = *ownerKind;
    if (ownerApiVersion) site.ownerApiVersion = *ownerApiVersion;
    site.podsInGroup = groupSize;
    return site;
  }

  static constexpr std::string_view kKnativeHint =
      "; in a Knative Service, tolerations, nodeSelector and affinity are accepted only when Knative's feature "
      "flags kubernetes.podspec-tolerations, kubernetes.podspec-nodeselector and kubernetes.podspec-affinity are "
      "\"enabled\" in ConfigMap config-features (namespace knative-serving); they ship \"disabled\", and "
      "Knative's webhook then rejects the Service";

  bool inKnativeServing() const { return ownerGroup() == "serving.knative.dev"; }

  void addPodSpec(const json& spec, const FieldPath& path) {
    PodSite site = newSite(spec, path);
    if (inKnativeServing()) site.placementHint = kKnativeHint;
    // Only a Pod's own spec is defaulted by the API server (limits -> requests).
    site.isPod = &spec == specOfPod;
    addContainers(site, spec, "initContainers", ContainerKind::Init);
    addContainers(site, spec, "containers", ContainerKind::App);
    addContainers(site, spec, "ephemeralContainers", ContainerKind::Ephemeral);
    setPodFields(site, spec, path);
    sites.push_back(std::move(site));
  }

  // The pod-level fields of a PodSpec.
  static void setPodFields(PodSite& site, const json& spec, const FieldPath& path) {
    site.nodeSelector = fieldOf(spec, path, "nodeSelector");
    site.affinity = fieldOf(spec, path, "affinity");
    site.tolerations = fieldOf(spec, path, "tolerations");
    site.resourceClaims = fieldOf(spec, path, "resourceClaims");
    site.podResources = fieldOf(spec, path, "resources");
  }

  // The innermost enclosing object that sets `name` (the node being walked
  // not included), without leaving the enclosing Kubernetes object.
  std::optional<PodField> inherited(const char* name) const {
    for (std::size_t i = chain.size(); i-- > ownerChainIndex;) {
      const json& ancestor = *chain[i].node;
      auto it = ancestor.find(name);
      if (it != ancestor.end() && !it->is_null()) return PodField{&*it, chain[i].path->toFieldPath().field(name)};
    }
    return std::nullopt;
  }

  // The nearest enclosing object (the holder itself first) that sets `name`.
  PodField nearest(const json& holder, const FieldPath& holderPath, const char* name) const {
    PodField own = fieldOf(holder, holderPath, name);
    if (own.value) return own;
    return inherited(name).value_or(own);  // absent: report where the holder would carry it
  }

  // A pod-level field of something inside the pod-level object (an Argo
  // containerSet or container, a KServe model): set by an enclosing object,
  // or else to be written in the object right around it.
  PodField aroundHolder(const FieldPath& holderPath, const char* name) const {
    if (std::optional<PodField> found = inherited(name)) return *found;
    if (chain.size() <= ownerChainIndex) return {nullptr, holderPath.field(name)};
    return {nullptr, chain.back().path->toFieldPath().field(name)};
  }

  // Argo's containerSet template: its containers run in one pod, whose
  // tolerations, nodeSelector and affinity are the template's (or the
  // Workflow's); ContainerSetTemplate itself has only containers,
  // volumeMounts and retryStrategy.
  void addContainerSet(const json& containerSet, const FieldPath& path) {
    PodSite site = newSite(containerSet, path);
    addContainers(site, containerSet, "containers", ContainerKind::App);
    site.nodeSelector = aroundHolder(path, "nodeSelector");
    site.affinity = aroundHolder(path, "affinity");
    site.tolerations = aroundHolder(path, "tolerations");
    site.misplaced = fieldsInside(containerSet, path);
    sites.push_back(std::move(site));
  }

  // "argoproj.io" of "argoproj.io/v1alpha1"; "" for the core group or none.
  std::string_view ownerGroup() const {
    if (!ownerApiVersion) return {};
    const std::string_view apiVersion = *ownerApiVersion;
    const auto slash = apiVersion.find('/');
    return slash == std::string_view::npos ? std::string_view{} : apiVersion.substr(0, slash);
  }

  // Whether the field `via` holds a Kubernetes Container (or a type that
  // embeds one), which has no tolerations, nodeSelector or affinity: those of
  // its pod are in the object around it. Other lone containers may carry them
  // themselves (NIMService's spec is the container and the pod at once).
  bool holdsAContainer(std::string_view via) const {
    if (via == "container" || via == "containers" || via == "initContainers" || via == "sidecars") return true;
    const std::string_view group = ownerGroup();
    if (group == "argoproj.io") return via == "script";
    // InferenceService predictors: ModelSpec and the framework predictors
    // (PredictorExtensionSpec) embed a Container; the PodSpec fields are the
    // predictor's own.
    if (group == "serving.kserve.io") {
      for (std::string_view key : {"model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
                                   "huggingface", "pmml", "lightgbm", "paddle"}) {
        if (via == key) return true;
      }
    }
    return false;
  }

  static MisplacedFields fieldsInside(const json& container, const FieldPath& path) {
    return {fieldOf(container, path, "nodeSelector"), fieldOf(container, path, "affinity"),
            fieldOf(container, path, "tolerations")};
  }

  bool inTrainJob() const { return ownerKind && *ownerKind == "TrainJob"; }

  // Whether a replicated job of a TrainJob's runtime, named by a
  // podSpecOverrides target or a runtime patch, may run the trainer's pods.
  // The Trainer v2 runtimes run the trainer as the job "node"; a custom
  // runtime may name it otherwise, and the name, though required, may be
  // missing from a hand-written manifest. Only the runtime's other jobs (the
  // initializers, the MPI launcher) are known not to be the trainer's:
  // reading any other name as the trainer's avoids a false alarm.
  static bool mayBeTrainersJob(const json& jobRef) {
    if (!jobRef.is_object()) return true;
    auto name = jobRef.find("name");
    if (name == jobRef.end() || !name->is_string()) return true;
    const std::string& job = name->get_ref<const std::string&>();
    return job != "dataset-initializer" && job != "model-initializer" && job != "launcher";
  }

  static bool overridesTrainer(const json& override) {
    auto targets = override.find("targetJobs");
    if (targets == override.end() || !targets->is_array() || targets->empty()) return true;
    return std::any_of(targets->begin(), targets->end(), mayBeTrainersJob);
  }

  // A partial pod spec that may schedule a TrainJob's trainer, and where it
  // is; `spec` is null when a runtime patch for the trainer's job has none.
  struct TrainerPodPatch {
    const json* spec;
    FieldPath path;
  };

  using KeyPath = std::span<const char* const>;

  // The map reached from `node` through `keys`, or null.
  static const json* descend(const json& node, KeyPath keys) {
    const json* at = &node;
    for (const char* key : keys) {
      if (!at->is_object()) return nullptr;
      auto it = at->find(key);
      if (it == at->end()) return nullptr;
      at = &*it;
    }
    return at->is_object() ? at : nullptr;
  }

  static FieldPath descendPath(FieldPath path, KeyPath keys) {
    for (const char* key : keys) path = path.field(key);
    return path;
  }

  // Older Trainer releases: spec.podSpecOverrides[], each entry a partial pod
  // spec for the jobs its targetJobs name.
  static void addOverridesForTrainer(const json& trainJobSpec, const FieldPath& specPath,
                                     std::vector<TrainerPodPatch>& out) {
    auto overrides = trainJobSpec.find("podSpecOverrides");
    if (overrides == trainJobSpec.end() || !overrides->is_array()) return;
    const FieldPath overridesPath = specPath.field("podSpecOverrides");
    for (std::size_t i = 0; i < overrides->size(); ++i) {
      const json& override = (*overrides)[i];
      if (override.is_object() && overridesTrainer(override)) out.push_back({&override, overridesPath.index(i)});
    }
  }

  static constexpr std::array<const char*, 3> kPatchToJobSet = {"trainingRuntimeSpec", "template", "spec"};
  static constexpr std::array<const char*, 4> kJobToPodSpec = {"template", "spec", "template", "spec"};

  // Current releases: spec.runtimePatches[], each (keyed by manager) patching
  // replicated jobs by name, a job's partial pod spec in
  // trainingRuntimeSpec.template.spec.replicatedJobs[j].template.spec.template.spec
  // (kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go).
  static void addRuntimePatchesForTrainer(const json& trainJobSpec, const FieldPath& specPath,
                                          std::vector<TrainerPodPatch>& out) {
    auto patches = trainJobSpec.find("runtimePatches");
    if (patches == trainJobSpec.end() || !patches->is_array()) return;
    for (std::size_t i = 0; i < patches->size(); ++i) {
      const json* jobSetSpec = descend((*patches)[i], kPatchToJobSet);
      if (!jobSetSpec) continue;
      auto jobs = jobSetSpec->find("replicatedJobs");
      if (jobs == jobSetSpec->end() || !jobs->is_array()) continue;
      const FieldPath jobsPath =
          descendPath(specPath.field("runtimePatches").index(i), kPatchToJobSet).field("replicatedJobs");
      for (std::size_t j = 0; j < jobs->size(); ++j) {
        const json& job = (*jobs)[j];
        if (!job.is_object() || !mayBeTrainersJob(job)) continue;
        out.push_back({descend(job, kJobToPodSpec), descendPath(jobsPath.index(j), kJobToPodSpec)});
      }
    }
  }

  static std::size_t listSize(const json& holder, const char* name) {
    auto list = holder.find(name);
    return list != holder.end() && list->is_array() ? list->size() : 0;
  }

  // Where the trainer's missing fields go: in its first partial pod spec
  // (one that exists, if any does), or else in a new entry of the list the
  // TrainJob uses, podSpecOverrides when it uses neither.
  static FieldPath trainerFieldsHome(const json& trainJobSpec, const FieldPath& specPath,
                                     const std::vector<TrainerPodPatch>& patches) {
    auto existing = std::find_if(patches.begin(), patches.end(), [](const TrainerPodPatch& p) { return p.spec; });
    if (existing != patches.end()) return existing->path;
    if (!patches.empty()) return patches.front().path;
    if (trainJobSpec.contains("runtimePatches") && !trainJobSpec.contains("podSpecOverrides")) {
      const FieldPath newPatch = specPath.field("runtimePatches").index(listSize(trainJobSpec, "runtimePatches"));
      return descendPath(descendPath(newPatch, kPatchToJobSet).field("replicatedJobs").index(0), kJobToPodSpec);
    }
    return specPath.field("podSpecOverrides").index(listSize(trainJobSpec, "podSpecOverrides"));
  }

  static constexpr std::string_view kTrainerPlacementHint =
      "; a TrainJob trainer takes it from a spec.podSpecOverrides entry with targetJobs [{name: node}] or, in "
      "Trainer releases with spec.runtimePatches, from a patch's trainingRuntimeSpec.template.spec."
      "replicatedJobs item named node, in template.spec.template.spec";

  // Kubeflow Trainer v2: a TrainJob's trainer (Trainer has no scheduling
  // fields) gets its pods' tolerations, nodeSelector and affinity from the
  // partial pod specs beside it that apply to its job, the first that sets
  // each. Unset, a finding points where it would be written.
  void scheduleByPatches(PodSite& site) const {
    if (chain.size() <= ownerChainIndex) return;
    const json& spec = *chain.back().node;
    const FieldPath specPath = chain.back().path->toFieldPath();
    std::vector<TrainerPodPatch> patches;
    addOverridesForTrainer(spec, specPath, patches);
    addRuntimePatchesForTrainer(spec, specPath, patches);
    const FieldPath home = trainerFieldsHome(spec, specPath, patches);
    auto field = [&](const char* name) -> PodField {
      for (const TrainerPodPatch& patch : patches) {
        if (!patch.spec) continue;
        PodField f = fieldOf(*patch.spec, patch.path, name);
        if (f.value) return f;
      }
      return {nullptr, home.field(name)};
    };
    site.nodeSelector = field("nodeSelector");
    site.affinity = field("affinity");
    site.tolerations = field("tolerations");
    if (!spec.contains("podSpecOverrides") && !spec.contains("runtimePatches")) {
      site.placementHint = kTrainerPlacementHint;
    }
  }

  void addLoneContainer(const json& holder, const FieldPath& path, const char* resourcesKey, std::string_view via) {
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
    } else {
      site.nodeSelector = nearest(holder, path, "nodeSelector");
      site.affinity = nearest(holder, path, "affinity");
      site.tolerations = nearest(holder, path, "tolerations");
    }
    sites.push_back(std::move(site));
  }

  // --- kinds whose GPU count is a field of their own (reference §14.14) ---

  static const json* memberOf(const json* node, const char* key) {
    if (!node || !node->is_object()) return nullptr;
    auto it = node->find(key);
    return it == node->end() ? nullptr : &*it;
  }

  const json* ownerObject() const { return chain.size() > ownerChainIndex ? chain[ownerChainIndex].node : nullptr; }

  bool ownerIs(std::string_view kind, std::string_view apiVersionPrefix) const {
    return ownerKind && *ownerKind == kind && ownerApiVersion && ownerApiVersion->starts_with(apiVersionPrefix);
  }

  // A DynamoGraphDeployment v1alpha1 service: an entry of spec.services.
  bool isDynamoService(const json& node) const {
    return ownerIs("DynamoGraphDeployment", "nvidia.com/v1alpha1") && node.is_object() && !chain.empty() &&
           chain.back().node == memberOf(memberOf(ownerObject(), "spec"), "services");
  }

  // resources.{limits,requests}.gpu becomes nvidia.com/gpu; custom entries
  // are resource names as they are (the operator's getResourcesConfig).
  static std::shared_ptr<const OperatorResources> dynamoResources(const json& service, const FieldPath& path) {
    auto out = std::make_shared<OperatorResources>();
    out->path = path.field("resources");
    for (const char* list : {"limits", "requests"}) {
      const json* entries = memberOf(memberOf(&service, "resources"), list);
      if (!entries || !entries->is_object()) continue;
      const FieldPath listPath = out->path.field(list);
      const bool limit = std::string_view(list) == "limits";
      if (const json* gpu = memberOf(entries, "gpu")) {
        out->entries.push_back({"nvidia.com/gpu", gpu, listPath.field("gpu"), limit});
      }
      const json* custom = memberOf(entries, "custom");
      if (!custom || !custom->is_object()) continue;
      for (const auto& [name, value] : custom->items()) {
        out->entries.push_back({name, &value, listPath.field("custom").key(name), limit});
      }
    }
    return out;
  }

  // The operator builds the service's pod from extraPodSpec (a PodSpec) and
  // its main container from extraPodSpec.mainContainer, with the service's
  // resources; multinode.nodeCount pods run one replica.
  void addDynamoService(const json& service, const FieldPath& path) {
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

  // A SparkApplication's spec.driver or spec.executor (a ScheduledSparkApplication's
  // under spec.template): a SparkPodSpec, the pod and its container at once.
  bool isSparkPod(const json& node, std::string_view via) const {
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
  void addSparkPod(const json& pod, const FieldPath& path) {
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

  // Paths are made only for the pod specs and containers found (see PathTrail).
  // `via` is the field holding the node, or holding the list it is an item of.
  void walk(const json& node, const PathTrail& path, std::string_view via, int depth) {
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
    if (isKubernetesObject(node)) {
      groupSize = node["kind"] == "LeaderWorkerSet" ? lwsGroupSize(node) : std::nullopt;
      ownerKind = &node["kind"].get_ref<const std::string&>();
      ownerApiVersion = &node["apiVersion"].get_ref<const std::string&>();
      auto spec = node.find("spec");
      specOfPod = *ownerKind == "Pod" && *ownerApiVersion == "v1" && spec != node.end() ? &*spec : nullptr;
      ownerChainIndex = chain.size();
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
      } else if (const char* key = loneContainerResourcesKey(node)) {
        addLoneContainer(node, path.toFieldPath(), key, via);
      }
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
        if ((key == "podSpecOverrides" || key == "runtimePatches") && inTrainJob()) continue;
        if (child.is_object() || child.is_array()) walk(child, path.field(key), key, depth + 1);
      }
      chain.pop_back();
    }

    ownerKind = savedKind;
    ownerApiVersion = savedApiVersion;
    specOfPod = savedSpecOfPod;
    ownerChainIndex = savedOwnerIndex;
    groupSize = savedGroupSize;
  }

  // LeaderWorkerSet spec.leaderWorkerTemplate.size: pods per group, leader
  // included (the API defaults it to 1).
  static std::optional<long long> lwsGroupSize(const json& lws) {
    auto spec = lws.find("spec");
    if (spec == lws.end() || !spec->is_object()) return std::nullopt;
    auto tmpl = spec->find("leaderWorkerTemplate");
    if (tmpl == spec->end() || !tmpl->is_object()) return std::nullopt;
    auto size = tmpl->find("size");
    if (size == tmpl->end()) return 1;
    if (size->is_number_integer() && size->get<std::int64_t>() > 0) return size->get<std::int64_t>();
    return std::nullopt;
  }
};

}  // namespace

std::string_view ContainerRef::name() const {
  auto it = container->find("name");
  return it != container->end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : "";
}

std::string_view ContainerRef::image() const {
  auto it = container->find("image");
  return it != container->end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : "";
}

std::vector<PodSite> findPodSites(const json& object) {
  Walker w;
  w.walk(object, PathTrail{}, {}, 0);
  return std::move(w.sites);
}

std::span<const WorkloadKind> workloadKinds() {
  static constexpr std::array<WorkloadKind, 21> kKinds{{
      {"Pod", "v1", "spec", "containers[], initContainers[] (sidecars: restartPolicy Always) .resources"},
      {"PodTemplate", "v1", "template.spec", "containers[].resources"},
      {"Deployment, ReplicaSet, StatefulSet, DaemonSet", "apps/v1", "spec.template.spec", "containers[].resources"},
      {"ReplicationController", "v1", "spec.template.spec", "containers[].resources"},
      {"Job; CronJob", "batch/v1", "spec.template.spec; spec.jobTemplate.spec.template.spec", "containers[].resources"},
      {"RayCluster, RayService, RayJob", "ray.io/v1",
       "headGroupSpec.template.spec, workerGroupSpecs[].template.spec (RayService: under spec.rayClusterConfig, "
       "RayJob: spec.rayClusterSpec)",
       "containers[].resources; a worker group's pods form one Ray cluster with the head"},
      {"PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob", "kubeflow.org/v1 (MPIJob v2beta1)",
       "spec.<kind>ReplicaSpecs.<role>.template.spec (MPIJob: spec.mpiReplicaSpecs)", "containers[].resources"},
      {"TrainJob", "trainer.kubeflow.org/v1alpha1",
       "spec.trainer (a container), scheduled by spec.podSpecOverrides[] or spec.runtimePatches[]",
       "spec.trainer.resourcesPerNode"},
      {"JobSet", "jobset.x-k8s.io/v1alpha2", "spec.replicatedJobs[].template.spec.template.spec",
       "containers[].resources"},
      {"LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1",
       "spec.leaderWorkerTemplate.leaderTemplate.spec, .workerTemplate.spec",
       "containers[].resources; leaderWorkerTemplate.size pods run one replica"},
      {"InferenceService", "serving.kserve.io/v1beta1",
       "spec.predictor (and transformer, explainer): the component is the pod spec; model, or a framework "
       "predictor (sklearn, pytorch, huggingface...), is its container",
       "predictor.model.resources, predictor.containers[].resources; in Serverless (Knative) deployment mode "
       "tolerations, nodeSelector and affinity need Knative's feature flags, as for a Knative Service"},
      {"LLMInferenceService", "serving.kserve.io/v1alpha1",
       "spec.template and spec.worker (PodSpecs), spec.prefill.template and spec.prefill.worker",
       "containers[].resources"},
      {"Job (Volcano)", "batch.volcano.sh/v1alpha1", "spec.tasks[].template.spec", "containers[].resources"},
      {"Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow", "argoproj.io/v1alpha1",
       "spec.templates[] (container, script, containerSet: the template is the pod; spec.workflowSpec in a "
       "CronWorkflow)",
       "templates[].container.resources, .script.resources, .containerSet.containers[].resources"},
      {"NIMService", "apps.nvidia.com/v1alpha1", "spec (the pod and its container at once)", "spec.resources"},
      {"DynamoGraphDeployment", "nvidia.com/v1alpha1",
       "spec.services.<name>.extraPodSpec (a PodSpec), main container extraPodSpec.mainContainer; "
       "multinode.nodeCount pods run one replica",
       "spec.services.<name>.resources.{limits,requests}.gpu: the operator sets it as nvidia.com/gpu on the main "
       "container; .custom holds other resource names"},
      {"DynamoGraphDeployment", "nvidia.com/v1beta1", "spec.components[].podTemplate.spec", "containers[].resources"},
      {"SparkApplication; ScheduledSparkApplication", "sparkoperator.k8s.io/v1beta2",
       "spec.driver, spec.executor (SparkPodSpec: the pod and its container at once); spec.template.driver/"
       "executor",
       "driver.gpu, executor.gpu {name, quantity}: the operator sets it as a limit of that resource on the driver "
       "or every executor pod"},
      {"Service, Configuration (Knative Serving)", "serving.knative.dev/v1",
       "spec.template.spec",
       "containers[].resources; tolerations, nodeSelector and affinity need Knative's feature flags "
       "kubernetes.podspec-tolerations, -nodeselector, -affinity (ConfigMap config-features), disabled by default"},
      {"Notebook (Kubeflow), PodCliqueSet (Grove), and any other kind", "any",
       "any object with a containers list (a pod spec) or a resources map with limits or requests (a container)",
       "containers[].resources"},
      {"Workspace (KAITO)", "kaito.sh/v1beta1", "not read",
       "the GPUs come from resource.instanceType (a cloud instance type), which no field counts"},
  }};
  return kKinds;
}

}  // namespace gpuguard
