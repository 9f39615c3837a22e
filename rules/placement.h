// Where a pod can go: the default scheduler's static filters, in its order
// (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity with the
// nodeSelector, NodeResourcesFit), against one node, with the reason strings
// kube-scheduler prints and, beyond them, why each filter failed.
//
// One copy for both users: the Pending replay (schedule/, with the pods bound
// to each node) and the rules that judge a pod against the cluster facts
// (rules/cluster_facts.h: allocatable only, no bound pods, so what can never
// fit whatever else runs).
//
// Pure: JSON in, structs out. Pod discovery, resources and tolerations come
// from rules/pod_specs.h, rules/resources.h and rules/pod_constraints.h.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/amount.h"
#include "rules/cluster_facts.h"
#include "rules/k8s/taints.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

// A pod's requests as the scheduler adds them up (k8s.io/component-helpers
// resource.PodRequests): per resource, the larger of the sum over app
// containers and sidecars and the peak of any init container running beside
// the sidecars started before it; limits stand in for missing requests (the
// API server's defaulting) and every value is rounded up to milli as
// SetDefaults_ResourceList does; pod-level spec.resources (cpu, memory,
// hugepages) replace the containers' sum; spec.overhead is added. Ephemeral
// containers count nothing.
struct PodRequests {
  ResourceList resources;             // only resources with a non-zero request
  std::vector<std::string> problems;  // values that do not parse or are negative (counted as 0)
};
PodRequests podRequests(const PodSite& site);

// A pod bound to a node (spec.nodeName) and what it holds there.
struct BoundPod {
  std::string ns;
  std::string name;
  ResourceList requests;
};

// Σ requests of `resource` by the bound pods, leaving out `except` (the pod
// being judged, when the snapshot already holds it).
Amount usedBy(const std::vector<BoundPod>& pods, std::string_view resource, const BoundPod* except = nullptr);

// One matchExpression or matchFields entry of a required node affinity term.
struct NodeExpression {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  std::string invalid;  // why the scheduler cannot parse it (the term never matches)
};

// The required node affinity: terms ORed, their parts ANDed.
struct RequiredAffinity {
  bool required = false;  // requiredDuringSchedulingIgnoredDuringExecution is set
  struct Term {
    std::vector<NodeExpression> expressions;
    std::vector<NodeExpression> fields;
    std::string invalid;
  };
  std::vector<Term> terms;
  // Batch and topology placers write one term per chosen host, thousands of
  // them: trying every term on every node costs terms x nodes. A valid term
  // with a kubernetes.io/hostname In or matchFields metadata.name In part
  // matches only the nodes it names, so it is listed under each name (the
  // hostname label's value, or the node's name); the other valid terms may
  // match any node. Invalid terms match none and are in neither.
  std::unordered_map<std::string, std::vector<std::size_t>> byHostname;
  std::unordered_map<std::string, std::vector<std::size_t>> byNodeName;
  std::vector<std::size_t> unnamed;

  // The indices of the terms that may match `node`, in order.
  std::vector<std::size_t> candidatesFor(const NodeFacts& node) const;
};

// A pod as the filters read it (placementPod()).
struct PlacementPod {
  const PodSite* site = nullptr;
  ResourceList requests;
  std::vector<Toleration> tolerations;  // effectiveTolerations, read once for every node
  std::vector<std::pair<std::string, std::string>> selector;  // nodeSelector, in order
  RequiredAffinity affinity;
  std::string nodeName;  // spec.nodeName
  std::optional<BoundPod> self;  // the Pod's identity, to leave its own requests out of `used`
  // Requested extended resources a DRA driver serves (KEP-5004), with where
  // that is said: "DeviceClass gpu.nvidia.com", "policy draExtendedResources".
  std::map<std::string, std::string, std::less<>> draBacked;
};

// "key In [a, b]", "key Gt 560", "key Exists"; a list of more than 8 values
// shows the first 8 and "and N more".
std::string describeExpression(const NodeExpression& x);
RequiredAffinity parseRequiredAffinity(const PodSite& site);
// spec.nodeSelector pairs, in order, with those its RuntimeClass merges in.
std::vector<std::pair<std::string, std::string>> nodeSelectorOf(const PodSite& site);
// The pod's tolerations plus those the API server and controllers add:
// its RuntimeClass's (PodSite::admitted, rules/pod_admission.h),
// DefaultTolerationSeconds (not-ready and unreachable NoExecute, every pod),
// the DaemonSet controller's, and ExtendedResourceToleration's when the
// policy says the plugin is on.
std::vector<Toleration> effectiveTolerations(const PodSite& site, const ResourceList& requests, const Policy& policy);
// Any toleration of the list tolerates `taint`.
bool tolerated(const std::vector<Toleration>& tolerations, const Taint& taint);

// The pod as the filters read it: `requests` (podRequests), its effective
// tolerations, nodeSelector, required affinity and spec.nodeName. `self` and
// `draBacked` are the caller's to fill.
PlacementPod placementPod(const PodSite& site, const ResourceList& requests, const Policy& policy);

// One requested resource on one node (NodeResourcesFit).
struct ResourceFit {
  std::string name;
  bool gpu = false;            // a GPU resource of the policy (nvidia.com/gpu, mig-*, gpu.shared...)
  Amount requested;
  bool advertised = false;     // named in status.capacity
  bool viaDra = false;         // not advertised, served by a DRA driver (KEP-5004): not counted, not failed
  Amount capacity;             // status.capacity (0 when not advertised)
  Amount allocatable;          // status.allocatable
  Amount used;                 // Σ requests of the pods bound to the node
  Amount free;                 // allocatable - used
  std::size_t holders = 0;     // bound pods requesting it
  bool fits = true;
  std::string cause;           // why not, in words ("" when it fits)
};

// One nodeSelector pair, affinity expression or field against one node.
struct LabelCheck {
  std::string requirement;               // "nvidia.com/gpu.product=NVIDIA-T4", "nvidia.com/cuda.driver-version.major Gt 560"
  std::string key;
  std::optional<std::string> nodeValue;  // nullopt: the node has no such label
  bool matches = false;
  std::string why;                       // when it fails: "node has Tesla-T4", "label absent"...
  std::string observed;                  // the node's side: "nvidia.com/gpu.product is Tesla-T4",
                                         // "nvidia.com/gpu.product absent"
};

// One term of the required node affinity (terms are ORed, its parts ANDed).
struct TermCheck {
  std::size_t index = 0;
  bool matches = false;
  std::string invalid;                   // non-empty: the term can never match (empty term, Gt "12.4"...)
  std::vector<LabelCheck> failing;       // its expressions and fields that fail here
};

// The filters against one node.
struct NodeVerdict {
  std::string node;
  bool cordoned = false;                 // spec.unschedulable and the pod does not tolerate it
  bool nodeNameMismatch = false;         // the pod names another node (spec.nodeName)
  std::size_t filteringTaints = 0;       // NoSchedule / NoExecute taints on the node
  std::vector<Taint> untoleratedTaints;  // those no toleration matches
  std::vector<LabelCheck> selectorFailures;
  bool affinityMatches = true;           // required node affinity (true when there is none)
  std::vector<TermCheck> terms;          // when it does not match: the first kTermsExplained terms
  std::size_t termsNotExplained = 0;     // the terms after those (they fail too)
  std::vector<ResourceFit> resources;    // every resource the pod requests
  bool tooManyPods = false;
  bool schedulable = false;
  std::vector<std::string> reasons;      // the scheduler's words for the first filter that fails
  std::string cause;                     // that filter's failure, explained ("fits" when none fails)
  std::string verdict;                   // the same in a few words, for the table ("fits", "cordoned",
                                         // "untolerated taint", "nodeSelector mismatch", resource causes)
};

// How many failing affinity terms a NodeVerdict explains: a verdict is kept
// per node, so words for every term would cost terms x nodes.
inline constexpr std::size_t kTermsExplained = 8;

// The node's side of the failed affinity terms: "nvidia.com/gpu.product is
// Tesla-T4, nvidia.com/cuda.driver-version.major is 535" (one term) or
// "term 0: ... | term 1: invalid: ... | 12 more terms" (several).
std::string describeFailedTerms(const NodeVerdict& v);

// The filters against one node with the pods bound to it (none: only what
// the node's allocatable can ever take).
NodeVerdict judgeNode(const PlacementPod& pod, const NodeFacts& node, const std::vector<BoundPod>& bound,
                      const Policy& policy);

// The scheduler's summary: reasons counted over nodes, as "N reason" strings
// sorted like FitError.Error() does, e.g. "0/5 nodes are available: 2 node(s)
// had untolerated taint(s), 3 Insufficient nvidia.com/gpu."
std::string schedulerSummary(const std::vector<NodeVerdict>& nodes);
// The same from counted reasons: reason -> nodes that gave it.
std::string schedulerSummary(const std::map<std::string, std::size_t>& reasons, std::size_t available,
                             std::size_t total);

}  // namespace gpuguard
