#include "rules/pod_admission.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string_view>

#include "rules/cluster_facts.h"
#include "rules/cluster_reduce.h"
#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

// Builds a site's AdmittedScheduling as the plugins run, each merging into
// what the ones before it left (PodNodeSelector runs before RuntimeClass in
// kube-apiserver's plugin order).
class Admission {
 public:
  explicit Admission(const PodSite& site) : site_(site) {}

  // Merges `selector` into the pod's nodeSelector; false, with the
  // conflict, when the pod (or an earlier plugin) sets one of its keys to
  // another value: the plugin rejects the pod, and nothing more is merged.
  bool mergeSelector(const LabelMap& selector, const std::string& source, SelectorConflict::Plugin plugin) {
    if (out_.conflict) return false;
    const json* current = admittedSoFar(out_.nodeSelector, site_.nodeSelector.value);
    for (const auto& [key, value] : selector) {
      const json* mine = current && current->is_object() ? member(*current, key) : nullptr;
      if (mine && valueText(*mine) != value) {
        const json* own = site_.nodeSelector.value && site_.nodeSelector.value->is_object()
                              ? member(*site_.nodeSelector.value, key)
                              : nullptr;
        out_.conflict = SelectorConflict{plugin, source, key, value, valueText(*mine), own && valueText(*own) == valueText(*mine)};
        return false;
      }
    }
    if (selector.empty()) return true;
    if (out_.nodeSelector.is_null()) out_.nodeSelector = ownOr(site_.nodeSelector.value, json::object());
    for (const auto& [key, value] : selector) out_.nodeSelector[key] = value;
    addSource(source);
    return true;
  }

  void appendTolerations(const json& tolerations, const std::string& source) {
    if (out_.conflict || tolerations.empty()) return;
    if (out_.tolerations.is_null()) out_.tolerations = ownOr(site_.tolerations.value, json::array());
    for (const json& t : tolerations) out_.tolerations.push_back(t);
    addSource(source);
  }

  void unknownRuntimeClass(const std::string& name) { out_.unknownRuntimeClass = name; }

  // The result, or null when admission changes nothing worth saying.
  std::shared_ptr<const AdmittedScheduling> done() {
    if (out_.sources.empty() && out_.unknownRuntimeClass.empty() && !out_.conflict) return nullptr;
    return std::make_shared<const AdmittedScheduling>(std::move(out_));
  }

 private:
  static const json* admittedSoFar(const json& merged, const json* own) { return merged.is_null() ? own : &merged; }
  // The pod's field (an object or array as written; `empty` when unset or
  // not of that type), ready for admission's additions.
  static json ownOr(const json* own, json empty) {
    if (own && own->type() == empty.type()) return *own;
    return empty;
  }
  void addSource(const std::string& source) {
    if (out_.sources.empty() || out_.sources.back() != source) out_.sources.push_back(source);
  }

  const PodSite& site_;
  AdmittedScheduling out_;
};

// PodNodeSelector (and OpenShift's OriginPodNodeEnvironment), when the
// policy says the API server runs it: the namespace's node selector.
void addNamespaceSelector(const GpuFacts& gpu, Admission& admission) {
  if (!gpu.policy.assumePodNodeSelector) return;
  const NamespaceFacts* ns = gpu.namespaceFacts(gpu.ns);
  if (!ns || !ns->nodeSelector) return;
  const bool openShift = ns->nodeSelectorAnnotation == kOpenShiftNodeSelectorAnnotation;
  admission.mergeSelector(*ns->nodeSelector, "namespace " + ns->name + "'s " + ns->nodeSelectorAnnotation,
                          openShift ? SelectorConflict::Plugin::OriginPodNodeEnvironment
                                    : SelectorConflict::Plugin::PodNodeSelector);
}

// The RuntimeClasses the GPU Operator's ClusterPolicy creates: a handler, no
// scheduling. Named but not held, they add nothing.
constexpr std::array<std::string_view, 3> kOperatorRuntimeClasses{"nvidia", "nvidia-cdi", "nvidia-legacy"};

// RuntimeClass (on by default): the class the pod names. One the input and
// the facts lack is unknown, not absent, even where the facts list every
// class: it is often applied with the workload (helm install creates a
// Deployment before its RuntimeClass; the watch lags a kubectl apply), and
// the plugin reads it when the controller creates the pods (red team 35 D4).
void addRuntimeClass(const PodSite& site, const GpuFacts& gpu, Admission& admission) {
  const std::string* name = site.spec ? stringAt(*site.spec, "runtimeClassName") : nullptr;
  if (!name || name->empty()) return;
  const RuntimeClassFacts* runtimeClass = gpu.runtimeClass(*name);
  if (!runtimeClass) {
    const bool operatorClass = std::find(kOperatorRuntimeClasses.begin(), kOperatorRuntimeClasses.end(), *name) !=
                               kOperatorRuntimeClasses.end();
    if (!operatorClass) admission.unknownRuntimeClass(*name);
    return;
  }
  const std::string source = "RuntimeClass " + runtimeClass->name;
  if (admission.mergeSelector(runtimeClass->nodeSelector, source, SelectorConflict::Plugin::RuntimeClass)) {
    admission.appendTolerations(runtimeClass->tolerations, source);
  }
}

}  // namespace

void applyAdmissionPlugins(std::vector<PodSite>& sites, const GpuFacts& gpu) {
  for (PodSite& site : sites) {
    Admission admission(site);
    addNamespaceSelector(gpu, admission);
    addRuntimeClass(site, gpu, admission);
    site.admitted = admission.done();
  }
}

const json* admittedNodeSelector(const PodSite& site) {
  return site.admitted && !site.admitted->nodeSelector.is_null() ? &site.admitted->nodeSelector : site.nodeSelector.value;
}

const json* admittedTolerations(const PodSite& site) {
  return site.admitted && !site.admitted->tolerations.is_null() ? &site.admitted->tolerations : site.tolerations.value;
}

std::string unknownRuntimeClassNote(const PodSite& site, std::string_view what) {
  if (!site.admitted || site.admitted->unknownRuntimeClass.empty()) return "";
  return "; the pod names RuntimeClass " + site.admitted->unknownRuntimeClass +
         " (spec.runtimeClassName), which neither the input nor the cluster facts hold (yet): its " + std::string(what) +
         " may supply it, as the RuntimeClass admission plugin adds them to the pod, hence a warning";
}

std::string namespaceSelectorNote(const GpuFacts& gpu) {
  if (gpu.policy.assumePodNodeSelector) return "";
  const NamespaceFacts* ns = gpu.namespaceFacts(gpu.ns);
  if (!ns || !ns->nodeSelector) return "";
  for (const std::string& label : gpu.policy.driverPinLabels) {
    auto pin = ns->nodeSelector->find(label);
    if (pin == ns->nodeSelector->end()) continue;
    const bool openShift = ns->nodeSelectorAnnotation == kOpenShiftNodeSelectorAnnotation;
    return "; namespace " + ns->name + "'s " + ns->nodeSelectorAnnotation + " pins " + label + "=" + pin->second +
           ", but only the " + (openShift ? "OpenShift OriginPodNodeEnvironment" : "PodNodeSelector") +
           " admission plugin adds it to pods" + (openShift ? "" : ", and it is off by default") +
           ": set assumePodNodeSelector: true in the policy if the API server runs it";
  }
  return "";
}

}  // namespace gpuguard
