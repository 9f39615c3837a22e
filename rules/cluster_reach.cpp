#include "rules/cluster_reach.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>

#include "rules/k8s/go_strconv.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"

namespace gpuguard {
namespace {

using nlohmann::json;

// Labels Karpenter gives a node from the instance type it picks (its
// well-known labels): a pool that does not constrain them may still set any
// value. Any other label a pool neither sets nor requires is absent on its
// nodes, and Karpenter does not launch for a pod that requires it.
bool karpenterWellKnown(std::string_view key) {
  static constexpr std::array<std::string_view, 11> kKeys = {
      "topology.kubernetes.io/zone",     "topology.kubernetes.io/region", "node.kubernetes.io/instance-type",
      "beta.kubernetes.io/instance-type", "kubernetes.io/arch",            "beta.kubernetes.io/arch",
      "kubernetes.io/os",                "beta.kubernetes.io/os",         "karpenter.sh/capacity-type",
      "kubernetes.io/hostname",          "node.kubernetes.io/windows-build"};
  if (std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end()) return true;
  return key.starts_with("karpenter.k8s.aws/") || key.starts_with("karpenter.azure.com/") ||
         key.starts_with("karpenter.k8s.gcp/");
}

// Whether some node of the pool can satisfy one requirement of the pod.
bool poolAdmits(const NodePoolFacts& pool, const NodeRequirement& want) {
  if (auto it = pool.labels.find(want.key); it != pool.labels.end()) {
    return requirementMatches(want.op, want.values, it->second);
  }
  if (want.key == "karpenter.sh/nodepool") return requirementMatches(want.op, want.values, pool.name);
  std::vector<const NodeRequirement*> own;
  for (const NodeRequirement& r : pool.requirements) {
    if (r.key == want.key) own.push_back(&r);
  }
  if (own.empty()) {
    if (karpenterWellKnown(want.key)) return true;
    return requirementMatches(want.op, want.values, std::nullopt);
  }
  const auto poolAllows = [&](const std::optional<std::string>& value) {
    return std::all_of(own.begin(), own.end(),
                       [&](const NodeRequirement* r) { return requirementMatches(r->op, r->values, value); });
  };
  // Candidate values: the pod's own (In), the pool's (In), or "absent".
  std::vector<std::optional<std::string>> candidates = {std::nullopt};
  for (const std::string& v : want.values) candidates.emplace_back(v);
  for (const NodeRequirement* r : own) {
    for (const std::string& v : r->values) candidates.emplace_back(v);
  }
  for (const auto& value : candidates) {
    if (poolAllows(value) && requirementMatches(want.op, want.values, value)) return true;
  }
  // Open sets on both sides (NotIn, Exists, Gt, Lt): some other value may do.
  const bool podOpen = want.op == "NotIn" || want.op == "Exists" || want.op == "Gt" || want.op == "Lt";
  const bool poolOpen = std::all_of(own.begin(), own.end(), [](const NodeRequirement* r) {
    return r->op == "NotIn" || r->op == "Exists" || r->op == "Gt" || r->op == "Lt";
  });
  return podOpen && poolOpen;
}

std::string poolSelectionMismatch(const std::vector<NodeTerm>& terms, const NodePoolFacts& pool) {
  std::string first;
  for (const NodeTerm& term : terms) {
    if (term.matchesNothing) continue;
    const NodeRequirement* failing = nullptr;
    for (const NodeRequirement& r : term.requirements) {
      if (!poolAdmits(pool, r)) {
        failing = &r;
        break;
      }
    }
    if (!failing) return "";
    if (first.empty()) first = "its nodes cannot satisfy " + describeRequirement(*failing, term);
  }
  return first.empty() ? "no node selector term can match" : first;
}

bool isGpuNode(const NodeFacts& node, const std::vector<std::string>& gpuResources, const Policy& policy) {
  if (const std::string* present = node.label("nvidia.com/gpu.present"); present && *present == "true") return true;
  for (const auto& [name, amount] : node.allocatable) {
    if (amount.isZero()) continue;
    const bool wanted = gpuResources.empty() ? policy.isGpuResource(name)
                                             : std::find(gpuResources.begin(), gpuResources.end(), name) != gpuResources.end();
    if (wanted) return true;
  }
  return false;
}

// Whether the node can give the pod its GPUs. `pluginNode` is isGpuNode's
// answer (a device plugin's GPU resource in allocatable, or GFD's label).
// With the cluster's ResourceSlices, a GPU that only DRA serves (a claim, an
// implicit DeviceClass name) needs a node a GPU driver's slices name, one a
// device plugin serves needs a plugin node, and an extended resource a
// DeviceClass serves (KEP-5004) either. Without slices the plugin's GPU nodes
// stand in for DRA's: both stacks usually run on the same nodes.
bool offersPodGpus(const NodeFacts& node, bool pluginNode, const std::vector<GpuSource>& sources, const GpuFacts& gpu) {
  if (sources.empty() || !gpu.cluster || !gpu.cluster->listed(FactKind::ResourceSlice)) return pluginNode;
  const bool draNode = gpu.draServesGpusOn(node.name);
  return std::all_of(sources.begin(), sources.end(), [&](const GpuSource& s) {
    if (!s.draBacked) return pluginNode;
    return s.kind == GpuSourceKind::ExtendedResource ? pluginNode || draNode : draNode;
  });
}

std::map<std::string, std::string, std::less<>> draBacked(const ResourceList& requests, const ClusterFacts& cluster,
                                                         const GpuFacts& gpu) {
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, amount] : requests) {
    if (const std::string* c = gpu.classServing(name)) {
      out.emplace(name, "DeviceClass " + *c);
    } else if (name.starts_with(kDeviceClassResourcePrefix)) {
      const std::string className = name.substr(kDeviceClassResourcePrefix.size());
      // A class the cluster does not have serves nothing.
      if (!cluster.listed(FactKind::DeviceClass) || gpu.deviceClass(className)) out.emplace(name, "DeviceClass " + className);
    } else if (gpu.policy.isDraExtendedResource(name)) {
      out.emplace(name, "policy draExtendedResources");
    }
  }
  return out;
}

// The pod's placement tells nodes apart by name: judge each node, not one
// per group.
bool namesNodes(const PlacementPod& pod, const std::vector<NodeTerm>& terms) {
  if (!pod.nodeName.empty()) return true;
  for (const NodeTerm& term : terms) {
    for (const NodeRequirement& r : term.requirements) {
      if (isPerNodeLabel(r.key)) return true;
    }
  }
  for (const RequiredAffinity::Term& term : pod.affinity.terms) {
    if (!term.fields.empty()) return true;
  }
  return false;
}

// What of a node the filters read for this pod (judgeNode with no bound
// pods): the labels its nodeSelector and affinity expressions name, the
// taints, the cordon, and the capacity and allocatable of what it requests
// and of pods. Node groups alike in these get the same verdict: a pod that
// reads only gpu.product and the driver major tells 20 node groups of one
// cloud apart as 4. Not for a pod that names nodes (matchFields, nodeName).
// Held as pointers into the node's facts, compared part by part: no text is
// made per node group.
class VisibleParts {
 public:
  VisibleParts(const PlacementPod& pod, const NodeFacts& node) : node_(&node) {
    std::size_t expressions = 0;
    for (const RequiredAffinity::Term& term : pod.affinity.terms) expressions += term.expressions.size();
    labels_.reserve(pod.selector.size() + expressions);
    amounts_.reserve(2 * pod.requests.size() + 1);
    for (const auto& [name, want] : pod.selector) labels_.push_back(node.label(name));
    for (const RequiredAffinity::Term& term : pod.affinity.terms) {
      for (const NodeExpression& x : term.expressions) labels_.push_back(node.label(x.key));
    }
    const auto amount = [&](const ResourceList& list, std::string_view name) {
      auto it = list.find(name);
      amounts_.push_back(it == list.end() ? nullptr : &it->second);
    };
    for (const auto& [name, requested] : pod.requests) {
      amount(node.capacity, name);
      amount(node.allocatable, name);
    }
    amount(node.allocatable, "pods");
  }

  bool operator==(const VisibleParts& o) const {
    const auto same = [](const auto* a, const auto* b) { return a == b || (a && b && *a == *b); };
    return node_->unschedulable == o.node_->unschedulable &&
           std::equal(labels_.begin(), labels_.end(), o.labels_.begin(), o.labels_.end(), same) &&
           std::equal(amounts_.begin(), amounts_.end(), o.amounts_.begin(), o.amounts_.end(), same) &&
           std::equal(node_->taints.begin(), node_->taints.end(), o.node_->taints.begin(), o.node_->taints.end(),
                      [](const Taint& a, const Taint& b) {
                        return a.key == b.key && a.value == b.value && a.effect == b.effect;
                      });
  }

  // Equal parts hash alike; the hash only sorts node groups into buckets.
  std::size_t hash() const {
    std::size_t h = node_->unschedulable;
    const auto mix = [&h](std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    const std::hash<std::string_view> text;
    for (const std::string* label : labels_) mix(label ? text(*label) : 1);
    for (const Amount* a : amounts_) mix(a ? static_cast<std::size_t>(a->floorUnits()) : 1);
    for (const Taint& t : node_->taints) mix(text(t.key) ^ text(t.value.value_or("~")) ^ text(t.effect));
    return h;
  }

 private:
  const NodeFacts* node_;
  std::vector<const std::string*> labels_;  // null: the node has no such label
  std::vector<const Amount*> amounts_;      // null: the node does not list the resource
};

// The node groups judged so far, one per set of VisibleParts: which earlier
// node group a new one is alike (its verdict is shared), if any.
class AlikeGroups {
 public:
  // The index (in PodReach::nodes) of the first node group that looked like
  // `parts`; else remembers `parts` as first seen at `index`.
  std::optional<std::size_t> alikeOrAdd(VisibleParts parts, std::size_t index) {
    if (seen_.size() < kFew) {
      // A few kinds of node group, the usual case: compared one by one, nothing hashed.
      for (const auto& [known, first] : seen_) {
        if (known == parts) return first;
      }
    } else {
      if (byHash_.empty()) {
        for (std::size_t i = 0; i < seen_.size(); ++i) byHash_.emplace(seen_[i].first.hash(), i);
      }
      const std::size_t hash = parts.hash();
      for (auto [it, end] = byHash_.equal_range(hash); it != end; ++it) {
        if (seen_[it->second].first == parts) return seen_[it->second].second;
      }
      byHash_.emplace(hash, seen_.size());
    }
    seen_.emplace_back(std::move(parts), index);
    return std::nullopt;
  }

 private:
  static constexpr std::size_t kFew = 8;
  std::vector<std::pair<VisibleParts, std::size_t>> seen_;
  std::unordered_multimap<std::size_t, std::size_t> byHash_;  // hash -> index in seen_
};

PoolReach judgePool(const NodePoolFacts& pool, const PlacementPod& pod, const std::vector<NodeTerm>& terms,
                    const std::vector<std::string>& gpuResources) {
  PoolReach p;
  p.pool = &pool;
  if (!pod.nodeName.empty()) {
    p.why = "the pod names node " + pod.nodeName + " (spec.nodeName)";
    return p;
  }
  const std::string selectionMismatch = poolSelectionMismatch(terms, pool);
  p.selected = selectionMismatch.empty();
  for (const Taint& t : pool.taints) {
    if ((t.effect == "NoSchedule" || t.effect == "NoExecute") && !tolerated(pod.tolerations, t)) {
      p.why = "untolerated taint " + describeTaint(t);
      return p;
    }
  }
  p.why = selectionMismatch;
  if (!p.why.empty()) return p;
  for (const std::string& resource : gpuResources) {
    const std::optional<long long> max = poolMaxGpus(pool, resource);
    if (max && (!p.maxGpus || *max > *p.maxGpus)) p.maxGpus = max;
  }
  p.reachable = true;
  return p;
}

}  // namespace

std::optional<long long> poolMaxGpus(const NodePoolFacts& pool, std::string_view resource) {
  std::optional<long long> max;
  const auto bound = [&](long long n) { max = max ? std::min(*max, n) : n; };
  for (const char* key : {"karpenter.k8s.aws/instance-gpu-count", "karpenter.azure.com/sku-gpu-count"}) {
    if (auto it = pool.labels.find(key); it != pool.labels.end()) {
      if (auto n = parseGoInt(it->second)) bound(*n);
    }
    for (const NodeRequirement& r : pool.requirements) {
      if (r.key != key) continue;
      if (r.op == "In" && !r.values.empty()) {
        long long most = -1;
        for (const std::string& v : r.values) most = std::max(most, parseGoInt(v).value_or(-1));
        if (most >= 0) bound(most);
      } else if (r.op == "Lt" && r.values.size() == 1) {
        if (auto n = parseGoInt(r.values[0])) bound(*n - 1);
      }
    }
  }
  if (auto it = pool.limits.find(resource); it != pool.limits.end()) {
    bound(it->second.floorUnits());
  }
  return max;
}

std::optional<std::string> driverMajorOf(const NodeFacts& node) {
  for (const char* key : {"nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver.major"}) {
    if (const std::string* v = node.label(key); v && !v->empty()) return *v;
  }
  if (const std::string* full = node.label("nvidia.com/cuda.driver-version.full"); full && !full->empty()) {
    return full->substr(0, full->find('.'));
  }
  return std::nullopt;
}

const DriverMajors& reachableDriverMajors(const PodReach& reach) {
  if (reach.driverMajors) return *reach.driverMajors;
  DriverMajors out;
  for (const NodeReach& n : reach.nodes) {
    if (!n.lands) continue;
    const std::optional<std::string> major = driverMajorOf(*n.node);
    if (!major) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == *major; });
    if (it == out.end()) it = out.insert(out.end(), {*major, {}});
    for (const NodeFacts* member : n.nodes) it->second.push_back(member->name);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto ia = parseGoInt(a.first), ib = parseGoInt(b.first);
    if (ia && ib && *ia != *ib) return *ia < *ib;
    return a.first < b.first;
  });
  return reach.driverMajors.emplace(std::move(out));
}

std::vector<std::string> reachableUnknownDriverNodes(const PodReach& reach) {
  std::vector<std::string> out;
  for (const NodeReach& n : reach.nodes) {
    if (!n.lands || driverMajorOf(*n.node)) continue;
    for (const NodeFacts* member : n.nodes) out.push_back(member->name);
  }
  return out;
}

std::string describeNodeNames(std::vector<std::string> nodes) {
  // The first three by name: a partial sort, not a sort of a whole cluster's names per finding.
  const auto shown = static_cast<long>(std::min<std::size_t>(nodes.size(), 3));
  std::partial_sort(nodes.begin(), nodes.begin() + shown, nodes.end());
  std::vector<std::string> names(nodes.begin(), nodes.begin() + shown);
  if (nodes.size() > 3) names.back() += ", ...";
  return std::to_string(nodes.size()) + (nodes.size() == 1 ? " node: " : " nodes: ") + joined(names);
}

std::string describeDriverMajors(const DriverMajors& majors) {
  std::vector<std::string> parts;
  for (const auto& [major, nodes] : majors) parts.push_back(major + " (" + describeNodeNames(nodes) + ")");
  return joined(parts);
}

const PodReach& ReachMemo::of(const PodSite& site, const ClusterFacts& cluster, const GpuFacts& gpu,
                              std::string_view ns) {
  if (kept_) {
    for (std::size_t i = 0; i < sites_->size(); ++i) {
      if (&(*sites_)[i] != &site) continue;
      std::optional<PodReach>& slot = (*kept_)[i];
      if (!slot) slot = reachOf(site, cluster, gpu, ns);
      return *slot;
    }
  }
  for (const auto& [known, reach] : done_) {
    if (known == &site) return reach;
  }
  done_.emplace_back(&site, reachOf(site, cluster, gpu, ns));
  return done_.back().second;
}

bool PodReach::schedulableOnSomeNode() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeReach& n) { return n.verdict->schedulable; });
}

bool PodReach::landsSomewhere() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeReach& n) { return n.lands; }) ||
         std::any_of(pools.begin(), pools.end(), [](const PoolReach& p) { return p.reachable; });
}

std::size_t PodReach::nodeCount() const {
  std::size_t n = 0;
  for (const NodeReach& r : nodes) n += r.nodes.size();
  return n;
}

std::vector<const NodeReach*> PodReach::landingNodes() const {
  std::vector<const NodeReach*> out;
  for (const NodeReach& n : nodes) {
    if (n.lands) out.push_back(&n);
  }
  return out;
}

namespace {

// The pod as the filters read it, with the namespace's default tolerations
// when the policy says PodTolerationRestriction applies them (off by default
// upstream: without it the annotation adds nothing, red team 32 B3), and the
// requests a DRA driver serves.
PlacementPod reachPlacement(const PodSite& site, const ResourceList& requests, const ClusterFacts& cluster,
                            const GpuFacts& gpu, std::string_view namespaceName) {
  PlacementPod pod = placementPod(site, requests, gpu.policy);
  const NamespaceFacts* ns = gpu.policy.assumePodTolerationRestriction ? cluster.namespaceFacts(namespaceName) : nullptr;
  if (ns) {
    for (const json& t : ns->defaultTolerations) {
      if (std::optional<Toleration> read = readToleration(t)) pod.tolerations.push_back(std::move(*read));
    }
  }
  pod.draBacked = draBacked(requests, cluster, gpu);
  return pod;
}

// Whether judging the pod's affinity on `judged` nodes or node groups stays
// within kMaxTermTries; else why not, in words.
std::string overTheBound(const PlacementPod& pod, std::size_t judged, bool perNode) {
  const std::size_t open = pod.affinity.unnamed.size();
  if (open == 0 || open <= kMaxTermTries / std::max<std::size_t>(judged, 1)) return "";
  return "its required node affinity has " + std::to_string(open) +
         " terms that name no node, to try on each of " + std::to_string(judged) +
         (perNode ? " nodes" : " node groups") + " (more than " + std::to_string(kMaxTermTries) + " tries)";
}

// NodeReach::reachable and lands from the node's verdict.
void judgeReach(NodeReach& n, const std::vector<std::string>& gpuResources, const std::vector<GpuSource>& sources,
                const GpuFacts& gpu) {
  const NodeVerdict& v = *n.verdict;
  n.gpuNode = offersPodGpus(*n.node, isGpuNode(*n.node, gpuResources, gpu.policy), sources, gpu);
  n.selected = n.gpuNode && !v.nodeNameMismatch && v.selectorFailures.empty() && v.affinityMatches;
  const bool placed = n.selected && !v.cordoned;
  n.reachable = placed && v.untoleratedTaints.empty();
  // NodeResourcesFit on the GPU resources alone: the cluster's pods may free
  // CPU and memory, never more GPUs than the node has.
  const bool gpusFit = std::all_of(v.resources.begin(), v.resources.end(), [&](const ResourceFit& f) {
    const bool gpuAsk = std::find(gpuResources.begin(), gpuResources.end(), f.name) != gpuResources.end();
    return !gpuAsk || f.viaDra || f.fits;
  });
  n.lands = n.reachable && gpusFit;
  n.landsButForTaints = placed && gpusFit && !v.untoleratedTaints.empty();
}

}  // namespace

PodReach reachOf(const PodSite& site, const ClusterFacts& cluster, const GpuFacts& gpu, std::string_view namespaceName) {
  const Policy& policy = gpu.policy;
  const ResourceList requests = podRequests(site).resources;
  std::vector<std::string> gpuResources;
  for (const auto& [name, amount] : requests) {
    if (gpu.isGpuResource(name)) gpuResources.push_back(name);
  }
  const std::vector<GpuSource>& sources = gpuSources(site, gpu);
  const PlacementPod pod = reachPlacement(site, requests, cluster, gpu, namespaceName);
  const std::vector<NodeTerm>& terms = nodeSelectionTerms(site);
  const bool perNode = namesNodes(pod, terms);
  PodReach reach;
  reach.notJudged = overTheBound(pod, perNode ? cluster.nodes().size() : cluster.nodeGroups().size(), perNode);
  if (!reach.notJudged.empty()) return reach;

  std::map<std::string, std::size_t> reasons;
  std::size_t available = 0;
  static const std::vector<BoundPod> kNoPods;
  std::vector<NodeGroup> singles;
  if (perNode) {
    for (const auto& node : cluster.nodes()) singles.push_back(NodeGroup{node.get(), {node.get()}});
  }
  AlikeGroups judgedAlike;
  for (const NodeGroup& group : perNode ? singles : cluster.nodeGroups()) {
    const NodeFacts* node = group.representative;
    NodeReach n;
    n.node = node;
    n.nodes = group.members;
    std::optional<std::size_t> alike;
    if (!perNode) alike = judgedAlike.alikeOrAdd(VisibleParts(pod, *node), reach.nodes.size());
    n.verdict = alike ? reach.nodes[*alike].verdict
                      : std::make_shared<const NodeVerdict>(judgeNode(pod, *node, kNoPods, policy));
    judgeReach(n, gpuResources, sources, gpu);
    for (const std::string& r : n.verdict->reasons) reasons[r] += n.nodes.size();
    if (n.verdict->schedulable) available += n.nodes.size();
    reach.nodes.push_back(std::move(n));
  }
  reach.verdict = schedulerSummary(reasons, available, cluster.nodes().size());
  for (const auto& pool : cluster.nodePools()) reach.pools.push_back(judgePool(*pool, pod, terms, gpuResources));
  return reach;
}

}  // namespace gpuguard
