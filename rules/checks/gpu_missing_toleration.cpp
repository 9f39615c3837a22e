// gpu-missing-toleration: a GPU pod that does not tolerate the GPU node taint,
// or whose toleration of it the API server rejects.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/cluster_reach.h"
#include "rules/support/gpu_taints.h"
#include "rules/support/k8s_objects.h"
#include "rules/support/platform_evidence.h"
#include "rules/support/unknown_placement.h"
#include "rules/support/toleration_near_miss.h"
#include "rules/support/toleration_validation.h"
#include "rules/k8s/go_strconv.h"
#include "rules/pod_admission.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/names.h"
#include "rules/k8s/taints.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 7> kPolicyKeys{"gpuResources", "draExtendedResources", "gpuTaints",
                                                      "assumeExtendedResourceToleration",
                                                      "assumePodTolerationRestriction", "assumePodNodeSelector", "platform"};

constexpr RuleDoc kDoc{
    .id = "gpu-missing-toleration",
    .defaultSeverity = Severity::Error,
    .summary = "A pod that asks for a GPU but does not tolerate the GPU nodes' taint, or whose GPU toleration the "
               "API server rejects.",
    .description =
        "GPU node pools are tainted (by convention nvidia.com/gpu:NoSchedule; GKE, AKS and the GPU Operator "
        "docs use it) so that ordinary pods stay off expensive nodes. A GPU pod without a matching toleration "
        "stays Pending with \"node(s) had untolerated taint\". A pod uses GPUs (the one notion every rule "
        "shares) when a container asks for a GPU resource of the policy (gpuResources), for the implicit extended "
        "resource deviceclass.resource.kubernetes.io/<class> of a GPU DeviceClass, or for an extended resource a GPU "
        "DeviceClass of the same input serves (spec.extendedResourceName, KEP-5004), or when it has a "
        "resourceClaims entry whose ResourceClaimTemplate or ResourceClaim (in the same input) asks a GPU "
        "DeviceClass; without the template, a claim counts when its name, resourceClaimTemplateName or "
        "resourceClaimName contains \"gpu\" or starts with \"mig-\". A GPU DeviceClass is one of the input whose "
        "selectors name the driver gpu.nvidia.com or whose extendedResourceName is a GPU resource, else one named "
        "like one: \"gpu\" in the name (gpu.nvidia.com, vfio.gpu.nvidia.com, gpu.example.com) or mig.* (the "
        "webhook, which never sees the templates, decides by the same names). Device taints (KEP-5055) do not replace node taints: "
        "a pod whose GPUs all come from DRA claims still lands on the GPU nodes and needs their toleration, and "
        "the ExtendedResourceToleration admission plugin adds none for claims or deviceclass.resource.kubernetes.io "
        "names. A pod judged without the cluster's node facts that names its platform while the policy is the "
        "generic one (a node label only GKE, EKS or "
        "AKS puts on its nodes - cloud.google.com/gke-*, eks.amazonaws.com/*, kubernetes.azure.com/*, "
        "karpenter.azure.com/* - required by its node selection, or a toleration of AKS's documented GPU taint "
        "sku=gpu:NoSchedule) is told which --platform judges it as that platform does; when that platform's "
        "facts need no toleration of its own (GKE and EKS run ExtendedResourceToleration for nvidia.com/gpu "
        "requests, AKS's taint is sku=gpu) the finding is a warning, not an error: the pod can only schedule on "
        "that platform's nodes, but nothing proves the cluster is that platform. With node facts under the generic policy, "
        "GPU nodes that all carry one platform's own label (cloud.google.com/gke-nodepool, eks.amazonaws.com/nodegroup) "
        "name it likewise: a node taint that platform's ExtendedResourceToleration tolerates for the pod is a warning "
        "naming the --platform that judges it as the cluster does. When the pod has tolerations but none matches, the finding names the closest and why it misses: "
        "a key a few letters off (or in another letter case), another effect, Equal with another value (or "
        "against a taint whose value the policy leaves open), an operator that is neither Exists nor Equal, or a "
        "matching toleration written inside a container. Matching follows Kubernetes' ToleratesTaint: an "
        "empty effect matches every effect, an empty key with Exists matches every taint, and Equal compares "
        "values, so it only tolerates a taint whose value the policy names. An Equal toleration of the GPU taint's "
        "key and effect when the policy leaves the taint's value open (the default) is, without node facts, a warning, not an error: it "
        "tolerates the nodes tainted with its value (GKE taints nvidia.com/gpu=present), so the pod schedules "
        "where the value matches and stays Pending where it does not. A workload queued by Kueue (label "
        "kueue.x-k8s.io/queue-name on it or its pod template) without the toleration is a warning too: Kueue adds "
        "the admitting ResourceFlavor's spec.tolerations to the pod template, so the flavor may supply it. "
        "Tolerations decided where the input cannot show are not reported: an Argo podSpecPatch that names them, "
        "and the runtime an operator merges the pods over when the object names one and leaves them unset - a "
        "TrainJob's spec.runtimeRef (its overrides' tolerations add to the runtime's), a KServe predictor model's "
        "runtime (KServe's MergePodSpec takes the ServingRuntime's tolerations as the base) and an "
        "LLMInferenceService's spec.baseRefs; the runtime itself, a pod template of its own, is judged when it "
        "is applied or linted. A namespace's scheduler.alpha.kubernetes.io/defaultTolerations count only when "
        "the policy sets assumePodTolerationRestriction: the PodTolerationRestriction admission plugin, which "
        "adds them to pods, is off by default; the finding says when they would tolerate the taint. "
        "A pod naming a RuntimeClass (spec.runtimeClassName) gets that class's scheduling.tolerations appended "
        "by the RuntimeClass admission plugin (on by default): they count when the input or the cluster facts "
        "hold the class; when neither does (not yet watched: helm install creates a Deployment before its "
        "RuntimeClass), the finding is a warning that says the class may supply the toleration (the GPU Operator's "
        "nvidia, nvidia-cdi and nvidia-legacy classes supply none). A Karpenter NodePool the pod's node selection "
        "requires (karpenter.sh/nodepool) that the cluster facts do not hold yet makes it a warning likewise. "
        "The taints come from the policy "
        "(gpuTaints); with the cluster's node facts (gpuguard-lint --facts or --cluster, the webhook's watched "
        "cache) the nodes' own taints decide, as kube-scheduler's TaintToleration filter does (key, Equal value or "
        "Exists, effect): GPU nodes the pod would land on but for NoSchedule or NoExecute taints it does not "
        "tolerate are reported with those taints: a GPU taint (the policy's gpuTaints or a platform's, as AKS's "
        "sku=gpu) of any effect or value (an Equal toleration of another value is then an error), which the fix "
        "adds the toleration of, and any other taint (a team's dedicated nodes, a health check's NoExecute) as a "
        "warning the fix leaves alone (taints controllers put on unwell or departing nodes, "
        "node.kubernetes.io/*, karpenter.sh/*, the cluster autoscaler's, ask "
        "nothing); a pod that lands on "
        "a GPU node (not cordoned, its placement and the node's taints admit it, and the node's allocatable holds "
        "the GPU resource it asks, as many as it asks) is not reported, nor a taint that no GPU node "
        "or NodePool of the facts carries (the policy still speaks when the facts hold no GPU node at all: a "
        "pool scaled to zero); when the pod's selection admits some GPU nodes or NodePools, only their taints "
        "count (a node it selects that is not ready yet asks nothing of another pool's taint). For GPUs a DRA driver may serve (claims, implicit DeviceClass names, extended "
        "resources a DeviceClass serves) the GPU nodes are those a ResourceSlice of a GPU driver names, and when "
        "the facts know none the missing toleration is a warning, never an error: such nodes need no GPU in "
        "allocatable nor a GPU Feature Discovery label, and may be untainted; clusters running the "
        "ExtendedResourceToleration admission plugin can set "
        "assumeExtendedResourceToleration. A PreferNoSchedule taint in gpuTaints is never reported: the "
        "scheduler's TaintToleration filter ignores it (it only lowers a node's score), so it keeps no pod off "
        "the GPU nodes. A pod that sets spec.nodeName bypasses the scheduler: the kubelet admits it against NoExecute "
        "taints only (lifecycle/predicate.go), so for it only a NoExecute GPU taint is reported. A toleration that bears on a GPU taint (its key, or an empty key) is also checked the "
        "way the API server's ValidateTolerations does, because a toleration that would match is worthless "
        "when the pod is rejected: \"value must be empty when `operator` is 'Exists'\", \"effect must be "
        "'NoExecute' when `tolerationSeconds` is set\", \"operator must be Exists when `key` is empty\", an Equal "
        "value that is not a label value, a tolerationSeconds that is not an integer (a decode error), an operator "
        "other than Equal or Exists (Unsupported value: \"exists\": supported values: \"Equal\", \"Exists\"; "
        "Lt and Gt need the alpha gate TaintTolerationComparisonOperators) and an effect other "
        "than NoSchedule, PreferNoSchedule or NoExecute; such a toleration's own finding replaces the missing "
        "toleration's. The "
        "API server rejects such Pods and workload templates; inside a custom resource (or a StatefulSet, whose "
        "template it does not validate) the pods the controller creates are rejected later, far from the author.",
    .remediation = "Add a toleration with operator Exists for the GPU taint key and effect, without a value or "
                   "tolerationSeconds.",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
    .withoutFacts = "the policy's gpuTaints",
};

// The toleration that tolerates `taint` whatever its value. Where the pod spec
// itself is missing (a TrainJob trainer without its podSpecOverrides entry),
// the entry needs fields only the author knows.
Fix tolerationFix(const json& object, const PodSite& site, const Taint& taint) {
  const json::json_pointer tolerations(site.tolerations.path.jsonPointer());
  if (!object.contains(tolerations.parent_pointer())) {
    const std::string field = site.tolerations.path.apiPath();
    return {field.substr(0, field.rfind('.')) + " does not exist; add it with the toleration by hand", {}};
  }
  nlohmann::ordered_json toleration = {{"key", taint.key}, {"operator", "Exists"}, {"effect", taint.effect}};
  // The site's own caveat (a Knative Service takes tolerations only behind a
  // feature flag) holds for the added toleration too.
  return {"added toleration {key: " + taint.key + ", operator: Exists, effect: " + taint.effect + "}" +
              std::string(site.placementHint),
          {JsonEdit::addToList(site.tolerations.path, std::move(toleration))}};
}

// A toleration on the taint's key (or an empty key) whose operator or effect
// the API server rejects with "Unsupported value".
bool unsupportedTolerationOf(const PodSite& site, const Taint& taint) {
  const json* list = site.tolerations.value;
  if (!list || !list->is_array()) return false;
  for (const json& t : *list) {
    if (!t.is_object()) continue;
    const auto key = tolerationField(t, "key"), op = tolerationField(t, "operator"),
               effect = tolerationField(t, "effect");
    if (!key || !op || !effect || (!key->empty() && *key != taint.key)) continue;
    if (!supportedTolerationOperator(*op) || !supportedTolerationEffect(*effect)) return true;
  }
  return false;
}

// The index of an Equal toleration (or one without an operator) of the taint's
// key and effect when the policy leaves the taint's value open: it tolerates
// the GPU nodes whose taint has its value (GKE: nvidia.com/gpu=present), so
// whether the pod schedules depends on the cluster, not on the manifest.
std::optional<std::size_t> equalAgainstOpenValue(const PodSite& site, const Taint& taint) {
  const json* list = site.tolerations.value;
  if (taint.value || !list || !list->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    if (!t.is_object()) continue;
    const auto key = tolerationField(t, "key"), op = tolerationField(t, "operator"),
               effect = tolerationField(t, "effect"), value = tolerationField(t, "value");
    if (!key || !op || !effect || !value || *key != taint.key) continue;
    if (!op->empty() && *op != "Equal") continue;
    if (!effect->empty() && *effect != taint.effect) continue;
    if (!labelValueErrors(*value).empty()) continue;  // rejected: its own finding
    return i;
  }
  return std::nullopt;
}

void reportEqualAgainstOpenValue(const json& object, const PodSite& site, const Taint& taint, std::size_t i,
                                 Reporter& out) {
  const json& t = (*site.tolerations.value)[i];
  const std::string value = tolerationField(t, "value").value_or("");
  out.reportFixableWithDefault(
      site.tolerations.path.index(i),
      FieldError::invalid(renderValue(t),
                          "operator Equal tolerates only GPU nodes tainted " + taint.key +
                              (value.empty() ? std::string(" with an empty value") : "=" + value) + ":" +
                              taint.effect +
                              ", and the policy's gpuTaints leave the taint's value open (GKE taints "
                              "nvidia.com/gpu=present, other platforms another value or none), so where the "
                              "value differs the pod stays Pending; write operator: Exists without a value, which "
                              "tolerates every value, or name the value in the policy's gpuTaints"),
      renderValue(t), tolerationFix(object, site, taint), Severity::Warning);
}

// Kueue adds the admitting ResourceFlavor's spec.tolerations to the pod
// template: the toleration may come from there, which the input does not say.
void reportQueuedByKueue(const json& object, const PodSite& site, const Taint& taint, const std::string& queue,
                         Reporter& out) {
  out.reportFixableWithDefault(
      site.tolerations.path,
      FieldError::required("no toleration for the GPU node taint " + describeTaint(taint) +
                           " in the pod template; the workload is queued by Kueue (kueue.x-k8s.io/queue-name: " +
                           queue + "), which adds its ResourceFlavor's spec.tolerations when it admits the workload, "
                           "so the pods schedule on GPU nodes only if that flavor tolerates " + describeTaint(taint) +
                           "; make sure it does (ResourceFlavor spec.tolerations), or add {key: " + taint.key +
                           ", operator: Exists, effect: " + taint.effect + "} to tolerations here"),
      "", tolerationFix(object, site, taint), Severity::Warning);
}

// What the cluster's facts say of the policy's GPU taint for this pod.
enum class Demand {
  None,         // the facts show the pod can do without it
  ByPolicy,     // no facts, or none about GPU nodes: the policy speaks blind
  ByNodes,      // a GPU node or NodePool of the facts the pod may go to carries it
  Unconfirmed,  // the pod's GPUs all may come from DRA, and no node that serves them is known
};

// Without node facts, the policy says what the GPU nodes carry. With them,
// kube-scheduler's TaintToleration filter reads the nodes' own taints: a pod
// that lands on a GPU node (placement and taints admit it, its allocatable
// holds the pod's GPU requests; rules/cluster_reach.h) needs no more, and a
// taint no GPU node or NodePool carries keeps no pod off (AKS's GPU nodes
// carry none by default, reference §14.17). When the pod's selection admits
// some GPU nodes or NodePools, only their taints count: GPU nodes it never
// goes to (another pool, tainted nvidia.com/gpu) ask it nothing; a node it
// selects but cannot use today (not ready, too few GPUs) says what it carries.
// When the facts hold no GPU node at all (a pool scaled to zero), or the pod
// was too large to judge against them, the policy still speaks for a device
// plugin's GPUs; for GPUs a DRA driver may serve, no GPU node known is only a
// warning: such nodes need no GPU in allocatable nor GFD's label, and
// ResourceSlices the facts did not list (or a driver not yet publishing) may
// name untainted ones, where kube-scheduler places the pod.
Demand clusterDemands(const CheckContext& ctx, const PodSite& site, const Taint& taint,
                      const std::vector<GpuSource>& sources) {
  if (!ctx.cluster || !ctx.cluster->listed(FactKind::Node)) return Demand::ByPolicy;
  const PodReach& reach = ctx.reach(site);
  if (!reach.notJudged.empty()) return Demand::ByPolicy;
  if (reach.landsSomewhere()) return Demand::None;
  const auto carries = [&taint](const std::vector<Taint>& taints) {
    return std::any_of(taints.begin(), taints.end(),
                       [&taint](const Taint& t) { return t.key == taint.key && t.effect == taint.effect; });
  };
  const bool anySelected =
      std::any_of(reach.nodes.begin(), reach.nodes.end(), [](const NodeReach& n) { return n.selected; }) ||
      std::any_of(reach.pools.begin(), reach.pools.end(), [](const PoolReach& p) { return p.selected; });
  bool anyGpuNode = false;
  for (const NodeReach& n : reach.nodes) {
    if (!n.gpuNode) continue;
    anyGpuNode = true;
    if ((n.selected || !anySelected) && carries(n.node->taints)) return Demand::ByNodes;
  }
  for (const PoolReach& p : reach.pools) {
    if ((p.selected || !anySelected) && carries(p.pool->taints)) return Demand::ByNodes;
  }
  if (anyGpuNode) return Demand::None;
  return allMayComeFromDra(sources) ? Demand::Unconfirmed : Demand::ByPolicy;
}

// The taints that alone keep the pod off some GPU nodes it would land on
// (placement and allocatable admit it), read as kube-scheduler's
// TaintToleration filter reads them - key, value and effect, empty effects
// matching all - whatever the policy's gpuTaints name: AKS's
// sku=gpu:NoSchedule, a NoExecute GPU taint, an Equal toleration of another
// value than the nodes'. Tolerating them all is enough to land on `nodes`.
struct TaintSet {
  std::vector<Taint> taints;
  std::vector<std::string> nodes;
};

bool sameTaints(const std::vector<Taint>& a, const std::vector<Taint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Taint& x, const Taint& y) {
    return x.key == y.key && x.effect == y.effect && x.value == y.value;
  });
}

// With the cluster's node facts: what keeps the pod off the GPU nodes it
// would land on. kube-scheduler binds it to any one node whose taints it all
// tolerates, so GPU nodes tainted differently (one pool nvidia.com/gpu,
// another sku=gpu) are alternatives: the set asked for is that of the most
// nodes (the fewest taints on a tie, then the first), the others are named
// beside it. Taints a controller puts on unwell or departing nodes
// (not-ready, Karpenter's disruption) ask nothing: a node held off by them
// alone takes the pod once well, so then nothing is asked. Nullopt when the
// pod lands on a GPU node, or without node facts.
struct NodeTaintDemand {
  TaintSet asked;
  std::vector<TaintSet> alternatives;
};

std::optional<NodeTaintDemand> nodeTaintsKeepingPodOff(const CheckContext& ctx, const PodSite& site) {
  if (!ctx.cluster || !ctx.cluster->listed(FactKind::Node)) return std::nullopt;
  if (placementOpaque(site)) return std::nullopt;  // tolerations or selection decided where the input cannot show
  const PodReach& reach = ctx.reach(site);
  if (!reach.notJudged.empty() || reach.landsSomewhere()) return std::nullopt;
  std::vector<TaintSet> sets;
  for (const NodeReach& n : reach.nodes) {
    if (!n.landsButForTaints) continue;
    std::vector<Taint> taints;
    for (const Taint& t : n.verdict->untoleratedTaints) {
      if (!isNodeLifecycleTaint(t)) taints.push_back(t);
    }
    if (taints.empty()) return std::nullopt;
    auto same = std::find_if(sets.begin(), sets.end(), [&](const TaintSet& s) { return sameTaints(s.taints, taints); });
    if (same == sets.end()) same = sets.insert(sets.end(), TaintSet{std::move(taints), {}});
    for (const NodeFacts* node : n.nodes) same->nodes.push_back(node->name);
  }
  if (sets.empty()) return std::nullopt;
  // Nodes that ask only GPU taints first: the others are kept for some pods (red team 34 D5).
  const auto otherTaints = [&](const TaintSet& s) {
    return std::count_if(s.taints.begin(), s.taints.end(), [&](const Taint& t) { return !isGpuTaint(t, ctx.policy); });
  };
  const auto best = std::min_element(sets.begin(), sets.end(), [&](const TaintSet& a, const TaintSet& b) {
    if (const auto oa = otherTaints(a), ob = otherTaints(b); oa != ob) return oa < ob;
    if (a.nodes.size() != b.nodes.size()) return a.nodes.size() > b.nodes.size();
    return a.taints.size() < b.taints.size();
  });
  NodeTaintDemand demand{std::move(*best), {}};
  for (auto it = sets.begin(); it != sets.end(); ++it) {
    if (it != best) demand.alternatives.push_back(std::move(*it));
  }
  return demand;
}

// "; or tolerate instead sku=gpu:NoSchedule, the taint of the other GPU nodes
// it would land on (1 node: b)": kube-scheduler needs one node it tolerates.
std::string alternativesNote(const std::vector<TaintSet>& alternatives) {
  if (alternatives.empty()) return "";
  std::string note = "; kube-scheduler needs only one node whose taints the pod tolerates, so tolerating instead ";
  // Three named at most: a cluster of many differently tainted groups must not make the message grow with it.
  const std::size_t shown = std::min<std::size_t>(alternatives.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    std::vector<std::string> names;
    for (const Taint& t : alternatives[i].taints) names.push_back(describeTaint(t));
    note += (i == 0 ? "" : ", or ") + joined(names, " and ") + " (" + describeNodeNames(alternatives[i].nodes) + ")";
  }
  if (alternatives.size() > shown) note += ", or " + std::to_string(alternatives.size() - shown) + " more";
  return note + " would do as well";
}

// The namespace's scheduler.alpha.kubernetes.io/defaultTolerations tolerate
// `taint`, but only the PodTolerationRestriction admission plugin adds them,
// off by default upstream (kube-apiserver's DefaultOffAdmissionPlugins) and
// not assumed by the policy: say so, the author may have counted on them.
std::string namespaceDefaultsNote(const CheckContext& ctx, const Taint& taint) {
  if (ctx.policy.assumePodTolerationRestriction) return "";
  const NamespaceFacts* ns = ctx.gpu().namespaceFacts(ctx.namespaceName);
  if (!ns) return "";
  const bool tolerates = std::any_of(ns->defaultTolerations.begin(), ns->defaultTolerations.end(),
                                     [&](const json& t) { return toleratesTaint(t, taint); });
  if (!tolerates) return "";
  return "; namespace " + std::string(ctx.namespaceName) + "'s scheduler.alpha.kubernetes.io/defaultTolerations "
         "tolerates it, but only the PodTolerationRestriction admission plugin adds them to pods, and it is off by "
         "default: set assumePodTolerationRestriction: true in the policy if the API server enables it";
}

// The note of an Unconfirmed demand: why the taint is asked for all the same.
std::string unconfirmedNote(const CheckContext& ctx) {
  const bool slicesListed = ctx.cluster->listed(FactKind::ResourceSlice);
  return std::string("; the cluster facts (") + ctx.cluster->source() + ") show no node " +
         (slicesListed ? "a ResourceSlice of a GPU driver names" : "with GPUs, and hold no ResourceSlices") +
         ", so the nodes that will serve this pod's DRA devices are unknown: if they carry no such taint, the "
         "pod schedules without the toleration";
}

// A pod that names its platform (a node label only GKE, EKS or AKS sets, or
// AKS's GPU toleration) judged by the generic policy: the finding says which
// --platform judges it as that platform does, and when the platform's own
// facts (its preset) tolerate the taint for it - GKE's and EKS's
// ExtendedResourceToleration plugin, AKS's sku=gpu taint - the finding is a
// warning: the pod can only schedule there, yet the cluster is not known to be
// that platform (anyone may label nodes), so it is not dropped either.
struct NamedPlatform {
  std::string note;
  bool toleratedThere = false;
};
NamedPlatform onPlatform(const PlatformEvidence& evidence, bool toleratedThere, std::string_view namedBy) {
  NamedPlatform named;
  named.toleratedThere = toleratedThere;
  const std::string flag = "--platform " + std::string(evidence.platform) + " (policy key platform: " +
                           std::string(evidence.platform) + ")";
  const std::string title(evidence.title);
  named.note = "; this verdict is the generic policy's, but " + std::string(namedBy) + " (" + evidence.what +
               (toleratedThere ? "): judged as on " + title + " with " + flag +
                                     " it needs no toleration of its own there, hence a warning"
                               : "): judge it as on " + title + " with " + flag);
  return named;
}

std::optional<NamedPlatform> namedPlatform(const CheckContext& ctx, const PodSite& site) {
  if (ctx.policy.platform != "generic") return std::nullopt;  // the user said which platform
  const std::optional<PlatformEvidence> evidence = platformNamedBy(site);
  if (!evidence) return std::nullopt;
  return onPlatform(*evidence, untoleratedGpuTaints(site, asOnPlatform(ctx.policy, evidence->platform)).empty(),
                    "the pod names " + std::string(evidence->title));
}

// With the cluster's facts the GPU nodes themselves may name the platform
// (every one carries GKE's or EKS's own label): its API server runs what its
// preset says, so a node taint its ExtendedResourceToleration plugin
// tolerates for this pod is a warning under the generic policy, never a
// denial of a pod the cluster would schedule.
std::optional<NamedPlatform> platformOfGpuNodes(const CheckContext& ctx, const PodSite& site, const Taint& taint,
                                                const std::vector<std::string>& nodes) {
  if (ctx.policy.platform != "generic") return std::nullopt;
  const std::optional<PlatformEvidence> evidence = platformOfNodes(nodes, *ctx.cluster);
  if (!evidence) return std::nullopt;
  return onPlatform(*evidence, toleratedOnPlatform(site, ctx.policy, evidence->platform, {taint}),
                    "its GPU nodes are " + std::string(evidence->title) + "'s");
}

class GpuMissingToleration final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      const std::vector<GpuSource>& sources = gpuSources(site, ctx.gpu());
      if (sources.empty()) continue;
      // A rejected toleration that would match still counts as tolerating:
      // its own finding says what to fix, and the fix keeps it tolerating.
      const std::optional<NodeTaintDemand> nodeTaints = nodeTaintsKeepingPodOff(ctx, site);
      if (nodeTaints) {
        for (const Taint& t : nodeTaints->asked.taints) reportNodeTaint(ctx, site, t, *nodeTaints, sources, out);
      }
      // GPU nodes the pod would land on but for their taints: those taints
      // are what keeps it off, not the policy's (which nodes its selection
      // excludes may carry).
      const std::vector<Taint> policyTaints =
          !nodeTaints ? untoleratedGpuTaints(site, ctx.policy) : std::vector<Taint>{};
      for (const Taint& taint : policyTaints) {
        // A toleration of the taint's key the API server rejects for its
        // operator or effect: its Unsupported value finding says what to fix.
        if (unsupportedTolerationOf(site, taint)) continue;
        const Demand demand = clusterDemands(ctx, site, taint, sources);
        if (demand == Demand::None) continue;
        if (const auto equal = equalAgainstOpenValue(site, taint)) {
          reportEqualAgainstOpenValue(ctx.object, site, taint, *equal, out);
          continue;
        }
        if (const auto queue = kueueQueueName(ctx.object, site)) {
          reportQueuedByKueue(ctx.object, site, taint, *queue, out);
          continue;
        }
        // With facts about the GPU nodes they decide; which platform the pod
        // names only helps a verdict the policy gives blind.
        const std::optional<NamedPlatform> platform =
            demand == Demand::ByPolicy ? namedPlatform(ctx, site) : std::nullopt;
        const bool softer = judgedByNamesOnly(sources) || demand == Demand::Unconfirmed ||
                            (platform && platform->toleratedThere) || !unknownPlacement(site, ctx.gpu()).empty();
        out.reportFixableWithDefault(
            site.tolerations.path,
            FieldError::required("no toleration for the GPU node taint " + describeTaint(taint) +
                                 ", so the pod cannot schedule on a GPU node; add {key: " + taint.key +
                                 ", operator: Exists, effect: " + taint.effect + "} to tolerations" +
                                 nearMissNote(site, taint) + misplacedNote(site.misplaced.tolerations, site.tolerations) +
                                 std::string(site.placementHint) + guessNote(sources) +
                                 (demand == Demand::Unconfirmed ? unconfirmedNote(ctx) : std::string()) +
                                 unknownRuntimeClassNote(site, "scheduling.tolerations") +
                                 unknownNodePoolNote(site, ctx.gpu()) + namespaceDefaultsNote(ctx, taint) +
                                 (platform ? platform->note : std::string())),
            "", tolerationFix(ctx.object, site, taint), softer ? Severity::Warning : kDoc.defaultSeverity);
      }
      checkGpuTolerations(site, ctx.policy, out);
    }
  }

 private:
  // A taint of the GPU nodes (nodeTaintsKeepingPodOff) the pod does not tolerate.
  static void reportNodeTaint(const CheckContext& ctx, const PodSite& site, const Taint& taint,
                              const NodeTaintDemand& demand, const std::vector<GpuSource>& sources, Reporter& out) {
    if (unsupportedTolerationOf(site, taint)) return;
    if (!isGpuTaint(taint, ctx.policy)) {  // the admin's own: named, never demanded nor added
      const std::string where = describeNodeNames(demand.asked.nodes) + "; " + ctx.cluster->source();
      out.reportWithDefault(site.tolerations.path, FieldError::required(otherTaintOfGpuNodes(taint, where)), "",
                            Severity::Warning);
      return;
    }
    if (const auto queue = kueueQueueName(ctx.object, site)) {
      reportQueuedByKueue(ctx.object, site, taint, *queue, out);
      return;
    }
    const std::optional<NamedPlatform> platform = platformOfGpuNodes(ctx, site, taint, demand.asked.nodes);
    const bool softer = judgedByNamesOnly(sources) || (platform && platform->toleratedThere) ||
                        !unknownPlacement(site, ctx.gpu()).empty();
    out.reportFixableWithDefault(
        site.tolerations.path,
        FieldError::required("no toleration for the taint " + describeTaint(taint) + " of the GPU nodes this pod "
                             "would land on (" + describeNodeNames(demand.asked.nodes) + "; " +
                             ctx.cluster->source() +
                             (bypassesScheduler(site) ? "), so the node's kubelet rejects it (the pod names its node: "
                                                        "no scheduler sees it); "
                                                      : "), so kube-scheduler leaves it Pending (untolerated taint); ") +
                             "add {key: " + taint.key + ", operator: Exists, effect: " + taint.effect +
                             "} to tolerations" + alternativesNote(demand.alternatives) + nearMissNote(site, taint) +
                             misplacedNote(site.misplaced.tolerations, site.tolerations) +
                             std::string(site.placementHint) + guessNote(sources) +
                             unknownRuntimeClassNote(site, "scheduling.tolerations") + unknownNodePoolNote(site, ctx.gpu()) +
                             namespaceDefaultsNote(ctx, taint) + (platform ? platform->note : std::string())),
        "", tolerationFix(ctx.object, site, taint), softer ? Severity::Warning : kDoc.defaultSeverity);
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuMissingToleration() { return std::make_unique<GpuMissingToleration>(); }

}  // namespace gpuguard::checks
