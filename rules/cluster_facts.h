// What the cluster itself says, for the rules that judge a pod against the
// nodes it can reach: the Nodes (labels, taints, cordon, capacity and
// allocatable), Karpenter NodePools as nodes that may yet exist, Namespaces
// (labels, default tolerations, node selector), RuntimeClasses (the
// scheduling they add to their pods), the DRA objects (DeviceClasses,
// ResourceClaimTemplates, ResourceClaims) that resolve a pod's claims, and
// the ResourceSlices that say which nodes a DRA driver serves devices on.
//
// One model, three sources: a snapshot file (gpuguard-lint --nodes), one list
// through the API (gpuguard-lint --cluster), a watched cache (the webhook).
// Each source turns an object into a record with the reducers
// (rules/cluster_reduce.h) and hands the records to a ClusterFactsBuilder,
// which makes the immutable ClusterFacts the engine reads
// (JudgeOptions::cluster). Records are shared, not copied: a cache that keeps
// a builder and rebuilds after each batch of watch events copies pointers.
//
// Data only: no I/O here. Null ClusterFacts (the default) means "no facts":
// every rule judges exactly as it does without them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/amount.h"
#include "rules/input_facts.h"
#include "rules/k8s/node_selection.h"
#include "rules/k8s/taints.h"

namespace gpuguard {

using LabelMap = std::map<std::string, std::string, std::less<>>;

// One Node, as the scheduler's static filters read it.
struct NodeFacts {
  std::string name;
  LabelMap labels;            // metadata.labels (GFD, platform, everything a selector may name)
  std::vector<Taint> taints;  // spec.taints in order; a missing value is "" (never nullopt)
  bool unschedulable = false; // spec.unschedulable: cordoned
  ResourceList capacity;      // status.capacity
  ResourceList allocatable;   // status.allocatable (capacity when the node reports none)

  const std::string* label(std::string_view key) const;
};

// A Karpenter NodePool (karpenter.sh/v1): the nodes it may launch.
// spec.template.spec.requirements restrict their labels (well-known labels
// such as karpenter.k8s.aws/instance-gpu-count, node.kubernetes.io/instance-type,
// and the template's own labels), spec.template.spec.taints are on every such
// node, startupTaints only until it is ready (Karpenter does not require a
// pod to tolerate them), spec.limits caps the pool's total.
struct NodePoolFacts {
  std::string name;
  std::vector<NodeRequirement> requirements;  // key, operator, values (minValues is not a filter)
  LabelMap labels;                            // spec.template.metadata.labels
  std::vector<Taint> taints;
  std::vector<Taint> startupTaints;
  ResourceList limits;                        // spec.limits ("nvidia.com/gpu": 16)
};

// One Namespace: its labels, the tolerations PodTolerationRestriction adds
// to every pod created in it (scheduler.alpha.kubernetes.io/defaultTolerations,
// a JSON list of tolerations) and the node selector merged into them
// (scheduler.alpha.kubernetes.io/node-selector, read by PodNodeSelector; when
// absent, OpenShift's openshift.io/node-selector, read by its
// OriginPodNodeEnvironment plugin, which skips a namespace carrying the
// former): "key=value,key2=value2".
struct NamespaceFacts {
  std::string name;
  LabelMap labels;
  nlohmann::json defaultTolerations = nlohmann::json::array();
  std::string defaultTolerationsError;  // the annotation does not parse: what is wrong ("" when fine)
  std::optional<LabelMap> nodeSelector;  // nullopt: no annotation, or one that does not parse
  std::string nodeSelectorAnnotation;    // the annotation it comes from ("" without one)
  std::string nodeSelectorError;         // the annotation does not parse: what is wrong ("" when fine)
};

// One RuntimeClass (node.k8s.io/v1): what the RuntimeClass admission plugin
// (on by default) adds to every pod naming it in spec.runtimeClassName,
// before the scheduler or a validating webhook sees the pod. Its
// scheduling.nodeSelector is merged into the pod's nodeSelector (a key the
// pod sets to another value rejects the pod), its scheduling.tolerations
// are appended to the pod's. The GPU Operator's `nvidia` class has no
// scheduling: it adds nothing.
struct RuntimeClassFacts {
  std::string name;
  LabelMap nodeSelector;                                 // scheduling.nodeSelector
  nlohmann::json tolerations = nlohmann::json::array();  // scheduling.tolerations (objects only)
};

// One ResourceSlice (resource.k8s.io): devices a DRA driver publishes.
// Node-local devices name their node (spec.nodeName); devices reachable from
// several nodes (spec.allNodes, spec.nodeSelector, spec.perDeviceNodeSelection:
// network-attached) name none, and the facts count them on every node. The
// devices themselves are not kept: which nodes a driver serves is what the
// rules read (a DRA-only GPU node has no GPU in allocatable and may carry no
// GPU Feature Discovery label).
struct ResourceSliceFacts {
  std::string driver;    // spec.driver
  std::string nodeName;  // spec.nodeName, "" when the devices are not node-local
  std::size_t devices = 0;
};

// The kinds the facts hold; a source says which it could list.
enum class FactKind {
  Node, NodePool, Namespace, DeviceClass, ResourceClaimTemplate, ResourceClaim, ResourceSlice, RuntimeClass
};
inline constexpr FactKind kAllFactKinds[] = {FactKind::Node,          FactKind::NodePool,
                                             FactKind::Namespace,     FactKind::DeviceClass,
                                             FactKind::ResourceClaimTemplate, FactKind::ResourceClaim,
                                             FactKind::ResourceSlice, FactKind::RuntimeClass};

// "nodes", "nodepools", "namespaces", "deviceclasses", ... (the resource's plural).
std::string_view factKindName(FactKind kind);
// The kind of an object the facts hold (by apiVersion group and kind), or
// nullopt: core/v1 Node and Namespace, resource.k8s.io DeviceClass,
// ResourceClaimTemplate, ResourceClaim and ResourceSlice, karpenter.sh NodePool,
// node.k8s.io RuntimeClass.
std::optional<FactKind> factKindOf(const nlohmann::json& object);

// Nodes that differ only in their names (and the labels that hold the name
// or a per-node time: kubernetes.io/hostname, nvidia.com/gfd.timestamp):
// one node group of a cloud, one Karpenter NodePool's instance type. The
// filters judge one of them for all (rules/cluster_reach.h), so 5,000 nodes
// of 20 groups cost 20 judgements per pod.
struct NodeGroup {
  const NodeFacts* representative = nullptr;
  std::vector<const NodeFacts*> members;  // by name
};

// Labels that differ from node to node without saying what a node is.
bool isPerNodeLabel(std::string_view key);

class ClusterFacts {
 public:
  using Nodes = std::vector<std::shared_ptr<const NodeFacts>>;
  using NodePools = std::vector<std::shared_ptr<const NodePoolFacts>>;

  // Where the facts come from, for findings: "snapshot nodes.json",
  // "cluster https://10.0.0.1:6443".
  const std::string& source() const { return source_; }
  // Whether the source could list `kind`: false means "unknown", not "none"
  // (a snapshot without DeviceClasses, a cluster without Karpenter).
  bool listed(FactKind kind) const { return listed_.count(kind) > 0; }

  const Nodes& nodes() const { return nodes_; }  // by name
  const std::vector<NodeGroup>& nodeGroups() const { return groups_; }  // by their first member's name
  const NodeFacts* node(std::string_view name) const;
  const NodePools& nodePools() const { return nodePools_; }  // by name
  const NamespaceFacts* namespaceFacts(std::string_view name) const;
  const RuntimeClassFacts* runtimeClass(std::string_view name) const;

  const DeviceClassFacts* deviceClass(std::string_view name) const;
  const ClaimFacts* claimTemplate(std::string_view ns, std::string_view name) const;
  const ClaimFacts* claim(std::string_view ns, std::string_view name) const;
  // The DeviceClass whose spec.extendedResourceName is `resource`, or nullptr.
  const std::string* classServing(std::string_view resource) const;
  // The drivers whose ResourceSlices hold devices on node `name` (its own
  // slices and those not local to a node), each once, in order of name.
  const std::vector<std::string>& sliceDriversOn(std::string_view name) const;
  // The DeviceClasses whose selectors name `driver` (DeviceClassFacts::drivers).
  const std::vector<std::string>& classesSelecting(std::string_view driver) const;

 private:
  friend class ClusterFactsBuilder;
  template <typename T>
  using ByName = std::map<std::string, std::shared_ptr<const T>, std::less<>>;

  std::string source_;
  std::set<FactKind> listed_;
  Nodes nodes_;
  std::vector<NodeGroup> groups_;
  NodePools nodePools_;
  ByName<NodeFacts> nodeByName_;
  ByName<NamespaceFacts> namespaces_;
  ByName<RuntimeClassFacts> runtimeClasses_;
  ByName<DeviceClassFacts> classes_;
  ByName<ClaimFacts> templates_;  // "namespace/name"
  ByName<ClaimFacts> claims_;     // "namespace/name"
  std::map<std::string, std::string, std::less<>> servedBy_;  // extended resource -> class
  using NamesBy = std::map<std::string, std::vector<std::string>, std::less<>>;
  NamesBy sliceDrivers_;          // node -> drivers with devices on it
  std::vector<std::string> anyNodeDrivers_;  // drivers of slices not local to a node
  NamesBy classesByDriver_;       // driver -> classes whose selectors name it
};

// Keeps the latest record of every object by kind and name, and makes the
// immutable ClusterFacts from them. Not thread-safe; build() is cheap (it
// shares the records), so a watcher can rebuild after every batch of events
// and publish the result with an atomic shared_ptr swap.
class ClusterFactsBuilder {
 public:
  // Reduces `object` (or each item of a List) and keeps it, replacing an
  // earlier record of the same kind and name; marks its kind listed.
  // Returns how many objects were taken (other kinds are skipped).
  std::size_t add(const nlohmann::json& object);
  // Forgets one object (a watch DELETED event); false when it was not held.
  bool remove(FactKind kind, std::string_view ns, std::string_view name);
  // Forgets every object of a kind (before a relist replaces them).
  void clear(FactKind kind);
  // The kind was listed, even when the list held nothing.
  void markListed(FactKind kind) { listed_.insert(kind); }
  void setSource(std::string source) { source_ = std::move(source); }

  std::size_t size(FactKind kind) const;
  // What the reducers could not read (a quantity that does not parse, a
  // defaultTolerations annotation that is not a JSON list), at most 100.
  const std::vector<std::string>& warnings() const { return warnings_; }

  std::shared_ptr<const ClusterFacts> build() const;

 private:
  template <typename T>
  using ByName = std::map<std::string, std::shared_ptr<const T>, std::less<>>;
  void addOne(const nlohmann::json& object, std::size_t& taken);
  // The slices' drivers by node and the classes by driver, into `facts`.
  void indexSlices(ClusterFacts& facts) const;
  void warn(std::vector<std::string> lines);

  std::string source_;
  std::set<FactKind> listed_;
  ByName<NodeFacts> nodes_;
  ByName<NodePoolFacts> nodePools_;
  ByName<NamespaceFacts> namespaces_;
  ByName<RuntimeClassFacts> runtimeClasses_;
  ByName<DeviceClassFacts> classes_;
  ByName<ClaimFacts> templates_;
  ByName<ClaimFacts> claims_;
  ByName<ResourceSliceFacts> slices_;
  std::vector<std::string> warnings_;
};

}  // namespace gpuguard
