// What the API server's admission plugins add to a pod's scheduling before
// kube-scheduler sees it (and before a validating webhook sees a Pod), from
// objects the pod names or lives in. A workload's pod template does not
// carry these; the pods its controller creates get them:
//   - RuntimeClass (on by default): the RuntimeClass a pod names in
//     spec.runtimeClassName has its scheduling.nodeSelector merged into the
//     pod's nodeSelector (a key the pod sets to another value: the pod is
//     rejected) and its scheduling.tolerations appended to the pod's
//     (kubernetes plugin/pkg/admission/runtimeclass, setScheduling). A class
//     the API server does not have rejects the pod ("RuntimeClass not found"),
//     but one the input and facts lack may be applied with the workload.
//   - PodNodeSelector (off by default; credited only with the policy's
//     assumePodNodeSelector): the namespace's
//     scheduler.alpha.kubernetes.io/node-selector merged into the pod's
//     nodeSelector (a conflict rejects the pod); OpenShift's
//     OriginPodNodeEnvironment does the same with openshift.io/node-selector
//     in a namespace without the former (NamespaceFacts::nodeSelector).
// The engine sets PodSite::admitted from the input's objects and the cluster
// facts (GpuFacts) before any rule runs; the rules read the pod's placement
// through admittedNodeSelector() and admittedTolerations().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/gpu_use.h"
#include "rules/pod_specs.h"

namespace gpuguard {

// A nodeSelector key an admission plugin would set to another value than the
// pod (or a plugin before it) already has: the plugin rejects the pod.
struct SelectorConflict {
  enum class Plugin { RuntimeClass, PodNodeSelector, OriginPodNodeEnvironment };
  Plugin plugin = Plugin::RuntimeClass;
  std::string source;    // "RuntimeClass nvidia-gpu", "namespace ml's scheduler.alpha.kubernetes.io/node-selector"
  std::string key;       // the label
  std::string wanted;    // the plugin's value
  std::string existing;  // the value the pod has by then
  bool podsOwn = true;   // the pod's own nodeSelector set it (else a plugin before)
};

struct AdmittedScheduling {
  // The pod's nodeSelector with what admission merges into it (a JSON
  // object), or null when admission adds none.
  nlohmann::json nodeSelector;
  // The pod's tolerations with those admission appends (a JSON array), or
  // null when admission adds none.
  nlohmann::json tolerations;
  // Where the additions come from, for findings: "RuntimeClass nvidia-gpu",
  // "namespace ml's scheduler.alpha.kubernetes.io/node-selector".
  std::vector<std::string> sources;
  // The pod names a RuntimeClass that neither the input nor the cluster
  // facts hold (not yet watched, another file, the facts do not list
  // RuntimeClasses; the GPU Operator's handler-only classes excepted): what
  // it adds is unknown, so a finding on a missing toleration or node
  // selection says it may come from there, as a warning. "" when known.
  std::string unknownRuntimeClass;
  // What the pod's nodeSelector conflicts with: the plugin rejects the pod.
  // Nothing more is merged then.
  std::optional<SelectorConflict> conflict;
};

// Sets PodSite::admitted on each site whose pods admission changes (or that
// names an unknown RuntimeClass); leaves the others alone.
void applyAdmissionPlugins(std::vector<PodSite>& sites, const GpuFacts& gpu);

// The pod's nodeSelector and tolerations as the scheduler reads them: with
// what admission adds (PodSite::admitted), else as written (null when unset).
const nlohmann::json* admittedNodeSelector(const PodSite& site);
const nlohmann::json* admittedTolerations(const PodSite& site);

// For a finding that a toleration (`what` = "scheduling.tolerations") or a
// node selection ("scheduling.nodeSelector") is missing: "; RuntimeClass X
// ... may add it" when the pod names a RuntimeClass the facts do not hold.
std::string unknownRuntimeClassNote(const PodSite& site, std::string_view what);

// For a finding that no node selection pins the driver, when the policy does
// not assume PodNodeSelector but the namespace's node selector names one of
// the driver pin labels: "; namespace ml's ... pins it, but only ...".
std::string namespaceSelectorNote(const GpuFacts& gpu);

}  // namespace gpuguard
