// Where the pods are. Kubernetes objects hold pod specs in many places:
// Pod.spec, Deployment.spec.template.spec, CronJob.spec.jobTemplate..., and
// custom resources nobody validates (RayCluster head and worker groups,
// PyTorchJob replica specs, JobSet replicated jobs, KServe predictors, Argo
// templates...). We find them generically instead of by a list of kinds:
//   - a pod spec is any object with a `containers` list of objects, except
//     Argo's `containerSet`: its containers run in the pod of the template
//     around it, whose tolerations, nodeSelector and affinity they get;
//   - a lone container is any other object whose `resources` (or Kubeflow
//     TrainJob's `resourcesPerNode`) holds `limits` or `requests` (Argo
//     `container`, KServe `model`, NIMService `spec`, TrainJob `trainer`);
//     its pod-level fields come from the nearest enclosing object that has
//     them (an Argo template, then the Workflow spec). When the lone
//     container is a Kubernetes Container (Argo `container`, KServe `model`:
//     see holdsAContainer), which has no such fields, its own do not count and
//     a missing one is reported where the object around it would carry it
//     (the Argo template, the KServe predictor). A TrainJob's trainer takes
//     them from the partial pod specs that apply to its job: the spec of
//     spec.podTemplateOverrides entries, the spec.podSpecOverrides entries
//     of older Trainer releases and the pod
//     specs of spec.runtimePatches' replicated jobs, whose `containers` lists
//     are patches, not pods.
// Two kinds carry the GPU count in a field of their own, which their operator
// turns into the pod's resource (OperatorResources): a DynamoGraphDeployment
// v1alpha1 service (resources.limits.gpu -> nvidia.com/gpu on the main
// container of extraPodSpec) and a SparkApplication's driver and executor
// (gpu {name, quantity}). workloadKinds() lists where each kind's pods are.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"

namespace gpuguard {

enum class ContainerKind {
  App,        // spec.containers
  Init,       // spec.initContainers, run to completion before the app
  Sidecar,    // spec.initContainers with restartPolicy: Always (runs beside the app)
  Ephemeral,  // spec.ephemeralContainers
  Lone,       // a container-like object outside any pod spec
};

struct ContainerResources;  // rules/resources.h
struct NodeTerm;            // rules/k8s/node_selection.h
struct GpuSourcesMemo;      // rules/gpu_use.cpp
struct AdmittedScheduling;  // rules/pod_admission.h

// A resource an operator puts on the container it builds, read from a field
// of its own custom resource: a DynamoGraphDeployment service's
// resources.limits.gpu becomes the main container's nvidia.com/gpu limit, a
// SparkApplication's executor.gpu {name, quantity} the executor pods' limit.
struct OperatorResource {
  std::string name;                       // the resource the pod gets: nvidia.com/gpu
  const nlohmann::json* value = nullptr;  // the quantity as written
  FieldPath path;                         // where it is written
  bool limit = true;                      // a limit (else a request)
};

// The resources of a container an operator builds: those it translates
// from its own fields, which replace any of the same name the container
// lists, and where they are written.
struct OperatorResources {
  FieldPath path;  // ...resources of the custom resource, for findings on the whole
  std::vector<OperatorResource> entries;
};

struct ContainerRef {
  const nlohmann::json* container = nullptr;
  FieldPath path;
  ContainerKind kind = ContainerKind::App;
  // The key holding its ResourceRequirements: "resources", or for Kubeflow
  // TrainJob's trainer "resourcesPerNode".
  std::string_view resourcesKey = "resources";
  // Set for a container an operator builds from a custom resource's own
  // fields (see OperatorResources); shared, since ContainerRefs are copied.
  std::shared_ptr<const OperatorResources> fromOperator{};

  std::string_view name() const;
  std::string_view image() const;  // "" when absent or not a string

  // What resourcesOf read, as written and after Pod defaulting: the checks
  // ask for the same container's resources many times per object, so they
  // are read once, on first use (hence mutable). Like the rest of a
  // ContainerRef, not for sharing between threads.
  mutable std::shared_ptr<const ContainerResources> resourcesAsWritten{};
  mutable std::shared_ptr<const ContainerResources> resourcesDefaulted{};
};

// A claim an operator adds to the pod it builds, asked for outside the pod
// spec: KServe's Managed DRA annotations (serving.kserve.io/exp-dra-*) on an
// LLMInferenceService. `podClaim` is the pod's resourceClaims entry written
// as a NIMService draResources entry that creates its template would be
// ({name, claimCreationSpec: {devices: [...]}}: rules/gpu_use.cpp reads that
// shape), `path` where the object asks for it, `container` the name of the
// container the operator lists it in ("" for none).
struct OperatorClaim {
  nlohmann::json podClaim;
  FieldPath path;
  std::string container;
};

// A pod-level field (nodeSelector, affinity, tolerations...) and where it is.
struct PodField {
  const nlohmann::json* value = nullptr;  // null when the pod does not set it
  FieldPath path;                          // where it is, or would be written
  // Set by something only the controller reads at run time: an Argo
  // podSpecPatch that names the field (`value` is that text), or the runtime
  // an operator merges under the pod (a TrainJob's runtimeRef, a KServe
  // predictor's ServingRuntime, an LLMInferenceService's baseRefs: `value`
  // is what the object itself writes, null when it writes nothing, and `path`
  // where it names the runtime). No rule may judge the field missing, and
  // none may take `value` for all the pod gets.
  bool opaque = false;
};

// Scheduling fields written inside a Kubernetes Container (an Argo
// `container`, a KServe `model`). The Container type has none: the API server
// prunes them, or the operator drops them when it decodes the object. They
// count for nothing; findings point them out.
struct MisplacedFields {
  PodField nodeSelector;
  PodField affinity;
  PodField tolerations;
};

struct PodSite {
  FieldPath specPath;                      // the pod spec (or the lone container's holder)
  const nlohmann::json* spec = nullptr;
  std::vector<ContainerRef> containers;
  PodField nodeSelector;
  PodField affinity;
  PodField tolerations;
  PodField resourceClaims;                 // DRA
  std::shared_ptr<const OperatorClaim> operatorClaim{};  // DRA, besides resourceClaims; shared: sites are copied
  PodField podResources;                   // pod-level spec.resources
  MisplacedFields misplaced;
  // Appended to a finding asking for a missing nodeSelector, affinity or
  // toleration when its path alone cannot say where it goes: a TrainJob
  // trainer with neither podSpecOverrides nor runtimePatches is written for
  // a Trainer release we cannot tell, and each takes the field elsewhere.
  std::string_view placementHint;
  bool isPod = false;                      // a v1 Pod: the API server copies limits to requests
  std::string ownerKind;                   // kind of the enclosing Kubernetes object
  std::string ownerApiVersion;
  // A head or worker group of a KubeRay RayClusterSpec (under headGroupSpec
  // or workerGroupSpecs), whatever object embeds it: RayCluster, RayService,
  // RayJob, AIBrix's RayClusterFleet and RayClusterReplicaSet, an AppWrapper.
  // Its pods join one Ray cluster with the head.
  bool inRayClusterSpec = false;
  // Pods that together run one replica of the workload, when the object says
  // so (LeaderWorkerSet size; a Ray cluster's worker hosts). Used by the
  // tensor-parallel checks.
  std::optional<long long> podsInGroup;
  // Its node-selection terms (nodeSelectionTerms in rules/pod_constraints.h):
  // half a dozen checks read them, so they are built once, on first use
  // (hence mutable). Like the rest of a PodSite, not for sharing between threads.
  mutable std::shared_ptr<const std::vector<NodeTerm>> selectionTerms{};
  // Its GPU sources (gpuSources in rules/gpu_use.h), kept with the facts they
  // were read with, for the same reason.
  mutable std::shared_ptr<const GpuSourcesMemo> gpuSourcesMemo{};
  // What admission plugins add to its pods' nodeSelector and tolerations
  // (a RuntimeClass's scheduling), set by the engine from the facts
  // (rules/pod_admission.h); null when they add nothing.
  std::shared_ptr<const AdmittedScheduling> admitted{};
};

// All pod sites in an object, in document order. Depth-limited, never throws.
std::vector<PodSite> findPodSites(const nlohmann::json& object);

// The workload kinds whose pods gpuguard finds and where, for the docs
// ("Where the pods are" in docs/rules.md). Most are found by the generic
// walk above; the rows say where to look and what a kind's controller
// does with them.
struct WorkloadKind {
  std::string_view kinds;     // "Deployment, ReplicaSet, StatefulSet, DaemonSet"
  std::string_view apiGroup;  // "apps/v1"
  std::string_view pods;      // where the pod specs are
  std::string_view gpus;      // where the GPU count is
};
std::span<const WorkloadKind> workloadKinds();

}  // namespace gpuguard
