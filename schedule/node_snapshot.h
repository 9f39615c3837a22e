// A cluster snapshot for the scheduling diagnosis: the nodes of
// `kubectl get nodes -o json` (a List of Node, or one Node; DeviceClasses in
// the same List, as `kubectl get nodes,deviceclasses -o json` prints them, say
// which extended resources DRA serves) and, optionally, the pods of
// `kubectl get pods -A -o json`, reduced to what the scheduler's filters read:
// labels, taints, spec.unschedulable, status.capacity and status.allocatable,
// and the requests of the pods bound to each node.
// Pure: JSON in, structs out; reading the files is the front end's business.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/amount.h"
#include "rules/cluster_facts.h"
#include "rules/placement.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard::schedule {

// podRequests, BoundPod: rules/placement.h (the filters' own).
using gpuguard::BoundPod;
using gpuguard::podRequests;
using gpuguard::PodRequests;

// A node of the snapshot: what the cluster facts hold of it (the same
// reducer, rules/cluster_reduce.h) and the pods bound to it.
struct NodeInfo : NodeFacts {
  std::vector<BoundPod> pods;     // bound here (spec.nodeName), not Succeeded or Failed

  // Σ requests of the bound pods for one resource, optionally leaving out
  // one pod (the pod being diagnosed, when the snapshot already holds it).
  Amount used(std::string_view resource, const BoundPod* except = nullptr) const;
};

struct Snapshot {
  std::vector<NodeInfo> nodes;
  // KEP-5004: extended resource name -> the DeviceClass whose
  // spec.extendedResourceName names it (resource.k8s.io/v1 DeviceClass items).
  std::map<std::string, std::string, std::less<>> draExtendedResources;
  // A snapshot made from live facts (snapshotOf): DeviceClasses serving an
  // extended resource are looked up there too.
  std::shared_ptr<const ClusterFacts> facts;
  bool podsGiven = false;
  std::size_t boundPods = 0;         // counted against a node of the snapshot
  std::size_t finishedPods = 0;      // Succeeded or Failed: hold nothing
  std::size_t podsOnOtherNodes = 0;  // bound to a node the snapshot does not list
  std::vector<std::string> warnings;
  std::string error;                 // non-empty: the nodes document holds no Node at all

  const NodeInfo* node(std::string_view name) const;
  NodeInfo* node(std::string_view name);

  // nodes' index by name (the first of a name wins), kept by makeSnapshot
  // and snapshotOf: a pod list of 100,000 pods finds each node in log time.
  std::map<std::string, std::size_t, std::less<>> byName;
};

// `nodes`: a List (or NodeList) of Node, or one Node, with any DeviceClass
// items beside them. `pods`: a List of Pod,
// or one Pod, or nullptr when no pods were given.
Snapshot makeSnapshot(const nlohmann::json& nodes, const nlohmann::json* pods = nullptr);

// The nodes of live cluster facts (gpuguard-lint --cluster --pending), no
// pods yet: podsGiven is false until addBoundPod is called or it is set.
Snapshot snapshotOf(std::shared_ptr<const ClusterFacts> facts);

// One Pod of `kubectl get pods -o json`: held against its node when it is
// bound there and not finished (Succeeded, Failed), else only counted.
// Reduced at once to what the filters read, so a caller can stream pods.
void addBoundPod(Snapshot& snapshot, const nlohmann::json& pod);

}  // namespace gpuguard::schedule
