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
// from the rule engine (rules/pod_specs.h, rules/resources.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/placement.h"
#include "rules/policy.h"
#include "schedule/node_snapshot.h"

namespace gpuguard::schedule {

// The filters and their verdicts live in rules/placement.h (one copy for the
// replay and the rules); these names stay where the replay's users find them.
using gpuguard::LabelCheck;
using gpuguard::NodeVerdict;
using gpuguard::ResourceFit;
using gpuguard::schedulerSummary;
using gpuguard::TermCheck;





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


}  // namespace gpuguard::schedule
