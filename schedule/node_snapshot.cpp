#include "schedule/node_snapshot.h"

#include <algorithm>

#include "rules/cluster_facts.h"
#include "rules/cluster_reduce.h"
#include "rules/k8s/json_access.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

// What a cluster of 100,000 pods may say about its quantities, bounded.
constexpr std::size_t kMaxWarnings = 100;

// Calls fn(item) for the object itself or each item of a List / *List.
template <typename Fn>
void forEachItem(const json& root, Fn&& fn) {
  if (!root.is_object()) return;
  const std::string kind = stringOr(root, "kind");
  const json* items = member(root, "items");
  if (items && items->is_array() && (kind.empty() || kind.ends_with("List"))) {
    for (const json& item : *items) fn(item);
    return;
  }
  fn(root);
}

void readDeviceClass(const json& deviceClass, Snapshot& s) {
  const json* spec = member(deviceClass, "spec");
  const std::string resource = spec ? stringOr(*spec, "extendedResourceName") : "";
  const json* metadata = member(deviceClass, "metadata");
  const std::string name = metadata ? stringOr(*metadata, "name") : "";
  if (!resource.empty()) s.draExtendedResources.emplace(resource, name);
}

}  // namespace

Amount NodeInfo::used(std::string_view resource, const BoundPod* except) const {
  return usedBy(pods, resource, except);
}

const NodeInfo* Snapshot::node(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &nodes[it->second];
}

NodeInfo* Snapshot::node(std::string_view name) {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &nodes[it->second];
}

void addBoundPod(Snapshot& s, const json& item) {
  if (!item.is_object()) return;
  const std::string kind = stringOr(item, "kind");
  if (!kind.empty() && kind != "Pod") return;
  const json* spec = member(item, "spec");
  const std::string nodeName = spec ? stringOr(*spec, "nodeName") : "";
  if (nodeName.empty()) return;  // not bound: holds nothing yet
  const json* status = member(item, "status");
  const std::string phase = status ? stringOr(*status, "phase") : "";
  if (phase == "Succeeded" || phase == "Failed") {
    ++s.finishedPods;
    return;
  }
  NodeInfo* node = s.node(nodeName);
  if (!node) {
    ++s.podsOnOtherNodes;
    return;
  }
  const json* metadata = member(item, "metadata");
  BoundPod p;
  p.ns = metadata ? stringOr(*metadata, "namespace") : "";
  p.name = metadata ? stringOr(*metadata, "name") : "";
  // The Pod's own spec (not a template it might carry in an annotation).
  for (const PodSite& site : findPodSites(item)) {
    if (site.specPath.apiPath() != "spec") continue;
    PodRequests r = podRequests(site);
    for (const std::string& problem : r.problems) {
      if (s.warnings.size() < kMaxWarnings) s.warnings.push_back("pod " + p.ns + "/" + p.name + " " + problem);
    }
    p.requests = std::move(r.resources);
    break;
  }
  node->pods.push_back(std::move(p));
  ++s.boundPods;
}

Snapshot snapshotOf(std::shared_ptr<const ClusterFacts> facts) {
  Snapshot s;
  if (!facts) return s;
  for (const auto& node : facts->nodes()) {
    NodeInfo n;
    static_cast<NodeFacts&>(n) = *node;
    s.byName.emplace(n.name, s.nodes.size());
    s.nodes.push_back(std::move(n));
  }
  s.facts = std::move(facts);
  return s;
}

Snapshot makeSnapshot(const json& nodesDoc, const json* podsDoc) {
  Snapshot s;
  bool foreign = false;  // an object no cluster snapshot holds (a Job, a Pod: a manifest given for --nodes)
  forEachItem(nodesDoc, [&](const json& item) {
    if (!item.is_object()) return;
    const std::string kind = stringOr(item, "kind");
    foreign = foreign || (!kind.empty() && !factKindOf(item));
    if (kind == "DeviceClass") {
      readDeviceClass(item, s);
      return;
    }
    if (!kind.empty() && kind != "Node") return;
    NodeInfo n;
    static_cast<NodeFacts&>(n) = reduceNode(item, s.warnings);
    if (n.name.empty()) {
      s.warnings.push_back("a node without metadata.name was skipped");
      return;
    }
    s.byName.emplace(n.name, s.nodes.size());
    s.nodes.push_back(std::move(n));
  });
  if (s.nodes.empty()) {
    const std::string kind = nodesDoc.is_object() ? stringOr(nodesDoc, "kind") : "";
    if (!nodesDoc.is_object() || (kind != "List" && kind != "NodeList" && kind != "Node") || foreign) {
      s.error = "expected the output of kubectl get nodes -o json (a List of Node)";
    }
  }

  if (!podsDoc) return s;
  s.podsGiven = true;
  forEachItem(*podsDoc, [&](const json& item) { addBoundPod(s, item); });
  return s;
}

}  // namespace gpuguard::schedule
