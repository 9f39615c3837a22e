// "Why is my GPU pod Pending?": each GPU pod (or pod template) of a manifest
// against each node of a cluster snapshot, judged with the filters of the
// default scheduler, in its order (NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity, NodeResourcesFit), and a verdict worded like
// the scheduler's FailedScheduling event ("0/5 nodes are available: ...").
// Unlike the scheduler it also says why each filter failed on each node: the
// device plugin never registered, devices reported Unhealthy (allocatable <
// capacity), which bound pods hold the GPUs, which label a nodeSelector pair
// or affinity expression saw, which taint is not tolerated.
//
// Pure: JSON in, structs out. Pod discovery, resources and tolerations come
// from the rule engine (rules/pod_specs.h, rules/semantics.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/policy.h"
#include "schedule/amount.h"
#include "schedule/node_snapshot.h"

namespace gpuguard::schedule {

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

struct NodeVerdict {
  std::string node;
  bool cordoned = false;                 // spec.unschedulable and the pod does not tolerate it
  bool nodeNameMismatch = false;         // the pod names another node (spec.nodeName)
  std::size_t filteringTaints = 0;       // NoSchedule / NoExecute taints on the node
  std::vector<Taint> untoleratedTaints;  // those no toleration matches
  std::vector<LabelCheck> selectorFailures;
  bool affinityMatches = true;           // required node affinity (true when there is none)
  std::vector<TermCheck> terms;          // when it does not match: every term
  std::vector<ResourceFit> resources;    // every resource the pod requests
  bool tooManyPods = false;
  bool schedulable = false;
  std::vector<std::string> reasons;      // the scheduler's words for the first filter that fails
  std::string cause;                     // that filter's failure, explained ("fits" when none fails)
  std::string verdict;                   // the same in a few words, for the table ("fits", "cordoned",
                                         // "untolerated taint", "nodeSelector mismatch", resource causes)
};

// A driver major the pod pins (nodeSelector or required affinity In) that no
// node of the snapshot has.
struct DriverPin {
  std::string label;                     // nvidia.com/cuda.driver-version.major
  std::vector<std::string> pinned;       // every value the pod accepts
  std::vector<std::string> missing;      // those no node has
  std::string where;                     // "nodeSelector", "required node affinity term 0"...
  std::vector<std::pair<std::string, std::size_t>> nodeValues;  // the majors the nodes have, with counts
};

struct PodDiagnosis {
  std::string kind, ns, name;            // of the manifest object ("" when absent)
  std::string specPath;                  // "spec", "spec.template.spec"...
  std::string source;                    // the caller's label for where it came from (file name)
  ResourceList requests;                 // what the scheduler adds up (node_snapshot.h)
  std::vector<std::string> gpuResources; // the GPU resources it requests
  bool hasNodeSelector = false;
  bool hasRequiredAffinity = false;
  std::vector<std::string> selectorText; // "nvidia.com/gpu.product=NVIDIA-T4", one per pair
  std::vector<std::string> affinityText; // one per required term: "key In [a, b], key Gt 540"
  long long gpus = 0;                    // podGpus(): GPUs of every kind
  std::vector<NodeVerdict> nodes;        // snapshot order
  std::vector<std::string> schedulableNodes;
  std::string verdict;                   // "schedulable on 2 node(s): a, b" / "0/5 nodes are available: ..."
  std::string dominantReason;            // the most common first-failing reason ("" when schedulable)
  std::vector<std::string> dominantNodes;
  std::vector<std::string> dominantDetails;  // why it holds, nodes with the same explanation grouped:
                                             // "cpu-1, cpu-2: nvidia.com/gpu: device plugin not registered..."
  std::optional<DriverPin> driverPin;
  std::vector<std::string> notes;

  bool schedulable() const { return !schedulableNodes.empty(); }
  std::string title() const;             // "Deployment default/vllm (spec.template.spec)"
};

// Every GPU pod site (rules: requestsGpu) of one manifest object, or of each
// item of a `kind: List`. Pods that are already bound (spec.nodeName with a
// status.phase: a `kubectl get pods -o json` dump) are skipped, so the pods
// file itself can be diagnosed for its Pending pods.
std::vector<PodDiagnosis> diagnoseObject(const nlohmann::json& object, const Snapshot& snapshot, const Policy& policy);

// The scheduler's summary: reasons counted over nodes, as "N reason" strings
// sorted like FitError.Error() does, e.g. "0/5 nodes are available: 2 node(s)
// had untolerated taint(s), 3 Insufficient nvidia.com/gpu."
std::string schedulerSummary(const std::vector<NodeVerdict>& nodes);

}  // namespace gpuguard::schedule
