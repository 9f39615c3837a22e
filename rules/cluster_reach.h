// Where a GPU pod can go in the cluster the facts describe: the default
// scheduler's static filters (rules/placement.h) over every Node, with
// allocatable and no bound pods (what can never fit, whatever else runs),
// and Karpenter NodePools as nodes that may yet exist. The rules that judge
// a pod against the cluster (gpu-unschedulable, gpu-missing-driver-pin,
// cuda-driver-too-old, gpu-count-exceeds-node) all read this one answer.
//
// Two notions:
//   - schedulable: every filter passes (the scheduler could bind it today,
//     were the node empty);
//   - reachable: the node is one the pod's placement admits, whatever its
//     GPU count: the cordon (NodeUnschedulable: unless the pod tolerates
//     node.kubernetes.io/unschedulable:NoSchedule), nodeSelector, required
//     affinity, spec.nodeName and taints pass, and the node offers GPUs at
//     all; gpu-count-exceeds-node is about these;
//   - lands: reachable, and the node's allocatable holds every GPU resource
//     the pod requests, as many as it asks (NodeResourcesFit: a MIG pod never
//     lands on a whole-GPU node, an 8-GPU pod never on a 4-GPU one); the
//     driver and toleration rules are about these.
//
// The work is bounded: a pod whose required affinity has more terms that
// may match any node than kMaxTermTries allows over the nodes (or node
// groups) is not judged (PodReach::notJudged), and the rules judge it as
// without facts.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/gpu_use.h"
#include "rules/placement.h"

namespace gpuguard {

// One node group (ClusterFacts::nodeGroups), or one node when the pod's
// placement names nodes (spec.nodeName, matchFields, kubernetes.io/hostname).
struct NodeReach {
  const NodeFacts* node = nullptr;       // the one judged
  std::vector<const NodeFacts*> nodes;   // every node it stands for, `node` among them
  // The static filters, no bound pods. Shared by the node groups the pod
  // sees alike (reachOf judges one of them for all): its `node` names the
  // one judged, `node` above the one this entry is about.
  std::shared_ptr<const NodeVerdict> verdict;
  // Offers the pod's GPUs: a GPU resource in allocatable, or GFD's
  // nvidia.com/gpu.present; for GPUs DRA serves, a ResourceSlice of a GPU
  // driver on the node (when the facts list ResourceSlices).
  bool gpuNode = false;
  // A GPU node the pod's selection admits (spec.nodeName, nodeSelector,
  // required affinity), whatever its taints, cordon and GPU count: the nodes
  // whose taints say what the pod must tolerate.
  bool selected = false;
  bool reachable = false;  // placement admits it (cordon, selector, affinity, nodeName, taints) and it is a GPU node
  bool lands = false;      // reachable and its allocatable holds the pod's GPU requests
  // Not reachable for untolerated taints alone: it would land were they
  // tolerated (what gpu-missing-toleration asks with the nodes' own taints).
  bool landsButForTaints = false;
};

// A NodePool as a node it may launch: its template's labels and
// requirements, its taints (startupTaints are not filters: Karpenter expects
// them gone once the node is ready) and how many GPUs one of its nodes holds
// at most.
struct PoolReach {
  const NodePoolFacts* pool = nullptr;
  bool reachable = false;               // the pod's placement is compatible with the pool
  bool selected = false;                // its selection is (spec.nodeName, selector, affinity), whatever the taints
  std::string why;                      // when not: "untolerated taint nvidia.com/gpu=true:NoSchedule"...
  std::optional<long long> maxGpus;     // per node, when the pool bounds it (instance-gpu-count, limits)
};

// How many affinity terms reachOf tries at most over the nodes it judges
// (terms that may match any node x nodes or node groups): about a second.
inline constexpr std::size_t kMaxTermTries = 4'000'000;

// Driver majors, each with the names of its nodes (reachableDriverMajors).
using DriverMajors = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct PodReach {
  std::vector<NodeReach> nodes;  // node groups, or nodes (NodeReach)
  std::vector<PoolReach> pools;
  std::string verdict;           // "0/12 nodes are available: ..." (schedulerSummary)
  // Not judged (nodes and pools empty), and why: judging it would cost more
  // than kMaxTermTries. The rules then judge the pod as without facts.
  std::string notJudged;

  // reachableDriverMajors's answer, made on first use: three rules read it, and a reach kept
  // between reviews (ReachCache) would otherwise copy every landing node's name on each review.
  mutable std::optional<DriverMajors> driverMajors;

  bool schedulableOnSomeNode() const;
  bool landsSomewhere() const;  // a GPU node it lands on, or a reachable NodePool
  std::vector<const NodeReach*> landingNodes() const;
  std::size_t nodeCount() const;
};

// The pod of `site` against `cluster`. `namespaceName` adds that namespace's
// default tolerations (PodTolerationRestriction adds them to every pod
// created there; a Deployment's template does not carry them).
PodReach reachOf(const PodSite& site, const ClusterFacts& cluster, const GpuFacts& gpu, std::string_view namespaceName);

// reachOf, once per pod site of one judge() call: the rules that read it
// (driver pin, GPU count, gpu-unschedulable) share one pass over the nodes.
// With `kept` (one slot per site of `sites`, ReachCache::slotsFor), the
// reaches go there, and what an earlier judge() left there is read back.
class ReachMemo {
 public:
  ReachMemo() = default;
  ReachMemo(const std::vector<PodSite>& sites, std::vector<std::optional<PodReach>>& kept)
      : sites_(&sites), kept_(&kept) {}

  const PodReach& of(const PodSite& site, const ClusterFacts& cluster, const GpuFacts& gpu, std::string_view ns);

 private:
  const std::vector<PodSite>* sites_ = nullptr;
  std::vector<std::optional<PodReach>>* kept_ = nullptr;
  // Sites outside `sites_`; a deque, so a reach handed out stays put while more are added.
  std::deque<std::pair<const PodSite*, PodReach>> done_;
};

// The CUDA driver major a node runs, from GPU Feature Discovery's labels:
// nvidia.com/cuda.driver-version.major, the deprecated
// nvidia.com/cuda.driver.major, or the major of nvidia.com/cuda.driver-version.full.
std::optional<std::string> driverMajorOf(const NodeFacts& node);

// The driver majors of the GPU nodes the pod lands on, each with its nodes
// (by name), majors in numeric order; nodes without a driver label are left out.
// Made once per reach (PodReach::driverMajors).
const DriverMajors& reachableDriverMajors(const PodReach& reach);

// The GPU nodes the pod lands on that carry no driver label (GPU Feature
// Discovery not deployed there, or not yet run): their driver is unknown.
std::vector<std::string> reachableUnknownDriverNodes(const PodReach& reach);

// "2 nodes: a, b" or "5 nodes: a, b, c, ...", names sorted, at most 3.
std::string describeNodeNames(std::vector<std::string> nodes);

// "535 (2 nodes: a, b), 570 (1 node: c)", at most 3 names per major.
std::string describeDriverMajors(const DriverMajors& majors);

// The whole GPUs one node of the pool holds at most, or nullopt when its
// requirements and limits do not say (karpenter.k8s.aws/instance-gpu-count
// In/Lt, spec.limits[nvidia.com/gpu]).
std::optional<long long> poolMaxGpus(const NodePoolFacts& pool, std::string_view resource);

}  // namespace gpuguard
