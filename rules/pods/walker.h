// The walk that finds the pod specs in an object (findPodSites,
// rules/pod_specs.h). The generic walk (rules/pod_specs.cpp) finds every map
// with a containers list and every container-like map outside one; the
// operator adapters beside it, one file per family, know where an
// operator's custom resource keeps its pods' scheduling fields and GPU
// count when the generic answer is wrong: rules/pods/argo.cpp,
// kserve.cpp (KServe and Knative Serving), trainjob.cpp (Kubeflow
// Trainer), dynamo.cpp (NVIDIA Dynamo), nim.cpp (NVIDIA NIM operator),
// spark.cpp, leaderworkerset.cpp.
// Internal to the engine, as abseil's internal/: only rules/pod_specs.cpp
// and rules/pods/ include it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"
#include "rules/pod_specs.h"

namespace gpuguard::pods {

// Deeper than any real manifest; bounds the recursion on hostile input.
inline constexpr int kMaxDepth = 64;

struct Ancestor {
  const nlohmann::json* node;
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
  const nlohmann::json* specOfPod = nullptr;  // spec of the enclosing v1 Pod, if the owner is one
  std::optional<long long> groupSize;         // pods per group of the enclosing LeaderWorkerSet
  bool inRayGroup = false;                    // under a RayClusterSpec's headGroupSpec or workerGroupSpecs

  // --- the generic walk (rules/pod_specs.cpp) ---

  // Paths are made only for the pod specs and containers found (see PathTrail).
  // `via` is the field holding the node, or holding the list it is an item of.
  void walk(const nlohmann::json& node, const PathTrail& path, std::string_view via, int depth);
  static bool isKubernetesObject(const nlohmann::json& node);
  // Policy and deploy kinds (kyverno.io, *.gatekeeper.sh, karpenter.sh, Argo CD
  // Application/ApplicationSet/AppProject): their pod-shaped parts are not pods.
  static bool holdsNoPods(const nlohmann::json& object);
  static bool isPodSpec(const nlohmann::json& node);
  // The key of a ResourceRequirements object directly in `node`, if any.
  static const char* loneContainerResourcesKey(const nlohmann::json& node);
  static PodField fieldOf(const nlohmann::json& holder, const FieldPath& path, const char* name);
  void addContainers(PodSite& site, const nlohmann::json& spec, const char* listName, ContainerKind kind);
  PodSite newSite(const nlohmann::json& spec, const FieldPath& path) const;
  void addPodSpec(const nlohmann::json& spec, const FieldPath& path);
  // The pod-level fields of a PodSpec.
  static void setPodFields(PodSite& site, const nlohmann::json& spec, const FieldPath& path);
  // The innermost enclosing object that sets `name` (the node being walked
  // not included), without leaving the enclosing Kubernetes object.
  std::optional<PodField> inherited(const char* name) const;
  // The nearest enclosing object (the holder itself first) that sets `name`.
  PodField nearest(const nlohmann::json& holder, const FieldPath& holderPath, const char* name) const;
  // A pod-level field of something inside the pod-level object (an Argo
  // containerSet or container, a KServe model): set by an enclosing object,
  // or else to be written in the object right around it.
  PodField aroundHolder(const FieldPath& holderPath, const char* name) const;
  // "argoproj.io" of "argoproj.io/v1alpha1"; "" for the core group or none.
  std::string_view ownerGroup() const;
  // Whether the field `via` holds a Kubernetes Container (or a type that
  // embeds one), which has no tolerations, nodeSelector or affinity: those of
  // its pod are in the object around it. Other lone containers may carry them
  // themselves (NIMService's spec is the container and the pod at once).
  bool holdsAContainer(std::string_view via) const;
  static MisplacedFields fieldsInside(const nlohmann::json& container, const FieldPath& path);
  void addLoneContainer(const nlohmann::json& holder, const FieldPath& path, const char* resourcesKey,
                        std::string_view via);
  static const nlohmann::json* memberOf(const nlohmann::json* node, const char* key);
  const nlohmann::json* ownerObject() const;
  bool ownerIs(std::string_view kind, std::string_view apiVersionPrefix) const;

  // --- Argo Workflows (rules/pods/argo.cpp) ---
  void addContainerSet(const nlohmann::json& containerSet, const FieldPath& path);
  // The field `name` of `holder`'s templateDefaults (a Workflow spec's), which
  // Argo merges into every template.
  std::optional<PodField> argoPodSpecPatch(const char* name) const;
  static std::optional<PodField> argoTemplateDefault(const nlohmann::json& holder, const PathTrail& holderPath,
                                                     const char* name);

  // --- KServe and Knative Serving (rules/pods/kserve.cpp) ---
  bool inKnativeServing() const;
  // An InferenceService predictor's model that names its ServingRuntime, and
  // an LLMInferenceService with baseRefs: the runtime's (the configs')
  // scheduling fields are the base the operator merges the pod over.
  void openToServingRuntime(PodSite& site, const nlohmann::json& model, const FieldPath& modelPath) const;
  void openToBaseConfigs(PodSite& site) const;
  // KServe's Managed DRA: an LLMInferenceService's exp-dra-* annotations
  // become a claim of each of its workload pods (template, worker, prefill's).
  void addManagedDraClaim(PodSite& site, const nlohmann::json& podSpec) const;

  // --- Kubeflow Trainer (rules/pods/trainjob.cpp) ---
  bool inTrainJob() const;
  // Marks the pod's nodeSelector, affinity and tolerations as supplied by a
  // runtime named at `runtimePath`, each unless the object writes it itself
  // (shared by the TrainJob and KServe adapters).
  static void openPlacementToRuntime(PodSite& site, const FieldPath& runtimePath);
  void scheduleByPatches(PodSite& site) const;
  static void openToTrainingRuntime(PodSite& site, const nlohmann::json& trainJobSpec, const FieldPath& specPath);

  // --- NVIDIA Dynamo (rules/pods/dynamo.cpp) ---
  bool isDynamoService(const nlohmann::json& node) const;
  void addDynamoService(const nlohmann::json& service, const FieldPath& path);

  // --- NVIDIA NIM operator (rules/pods/nim.cpp) ---
  bool isNimServiceSpec(const nlohmann::json& node) const;
  void addNimService(const nlohmann::json& spec, const FieldPath& path);

  // --- Spark (rules/pods/spark.cpp) ---
  bool isSparkPod(const nlohmann::json& node, std::string_view via) const;
  void addSparkPod(const nlohmann::json& pod, const FieldPath& path);

  // --- LeaderWorkerSet (rules/pods/leaderworkerset.cpp) ---
  static std::optional<long long> lwsGroupSize(const nlohmann::json& lws);
};

// Argo: whether a template's field `via` (beyond container and the like)
// holds a Container.
bool argoFieldHoldsContainer(std::string_view via);
// KServe: whether a predictor's field `via` holds a Container (ModelSpec and
// the framework predictors embed one).
bool kserveFieldHoldsContainer(std::string_view via);
// What a finding asking for a scheduling field adds in a Knative Service.
std::string_view knativePlacementHint();

}  // namespace gpuguard::pods
