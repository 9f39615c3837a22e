#include "schedule/node_snapshot.h"

#include <algorithm>

#include "rules/k8s/json_access.h"
#include "rules/semantics.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

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

void readResources(const json* list, ResourceList& out, const std::string& where, std::vector<std::string>& warnings) {
  if (!list || !list->is_object()) return;
  for (const auto& [name, value] : list->items()) {
    std::optional<Amount> a = Amount::fromJson(value);
    if (!a) {
      warnings.push_back(where + ": " + name + " " + renderValue(value) + " is not a quantity; ignored");
      continue;
    }
    out[name] = *a;
  }
}

// Requests after the API server's defaulting (limit when no request), rounded
// up to milli; nullopt for values that do not parse or are negative.
std::optional<Amount> requestAmount(const ResourceEntry& e) {
  QuantityValue q = decodeQuantity(*e.value);
  if (!q.quantity || q.quantity->isNegative()) return std::nullopt;
  return Amount::fromQuantity(q.quantity->defaulted());
}

ResourceList containerRequests(const ContainerRef& c, std::vector<std::string>& problems) {
  ResourceList out;
  const ContainerResources r = resourcesOf(c, /*podDefaulting=*/true);
  for (const ResourceEntry& e : r.requests) {
    std::optional<Amount> a = requestAmount(e);
    if (!a) {
      problems.push_back(e.path.apiPath() + ": " + renderValue(*e.value) + " is not a valid quantity; counted as 0");
      continue;
    }
    out[e.name] = *a;
  }
  return out;
}

void add(ResourceList& into, const ResourceList& what) {
  for (const auto& [name, a] : what) into[name] += a;
}

void maxInto(ResourceList& into, const ResourceList& what) {
  for (const auto& [name, a] : what) {
    auto it = into.find(name);
    if (it == into.end()) into.emplace(name, a);
    else if (a > it->second) it->second = a;
  }
}

bool podLevelResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name.starts_with("hugepages-");
}

void readDeviceClass(const json& deviceClass, Snapshot& s) {
  const json* spec = member(deviceClass, "spec");
  const std::string resource = spec ? stringOr(*spec, "extendedResourceName") : "";
  const json* metadata = member(deviceClass, "metadata");
  const std::string name = metadata ? stringOr(*metadata, "name") : "";
  if (!resource.empty()) s.draExtendedResources.emplace(resource, name);
}

}  // namespace

PodRequests podRequests(const PodSite& site) {
  PodRequests out;
  ResourceList apps;       // app containers and sidecars: they run together
  ResourceList sidecars;   // sidecars started so far
  ResourceList initPeak;   // the most any init phase needs
  for (const ContainerRef& c : site.containers) {  // init containers come first, in order
    if (c.kind == ContainerKind::Ephemeral) continue;  // ephemeral containers get no resources
    const ResourceList r = containerRequests(c, out.problems);
    if (c.kind == ContainerKind::Init) {
      ResourceList phase = r;
      add(phase, sidecars);
      maxInto(initPeak, phase);
    } else if (c.kind == ContainerKind::Sidecar) {
      add(apps, r);
      add(sidecars, r);
      maxInto(initPeak, sidecars);
    } else {
      add(apps, r);
    }
  }
  maxInto(apps, initPeak);

  // Pod-level resources (PodLevelResources, beta in 1.34): they replace the
  // containers' sum for the resources they name.
  if (site.podResources.value && site.podResources.value->is_object()) {
    // resourcesOf reads container["resources"]: wrap the pod-level object.
    const json wrapped = json{{"resources", *site.podResources.value}};
    ContainerRef pod;
    pod.container = &wrapped;
    pod.path = site.specPath;
    for (const auto& [name, a] : containerRequests(pod, out.problems)) {
      if (podLevelResource(name)) apps[name] = a;
    }
  }
  if (site.spec && site.spec->is_object()) {
    if (const json* overhead = member(*site.spec, "overhead"); overhead && overhead->is_object()) {
      for (const auto& [name, value] : overhead->items()) {
        QuantityValue q = decodeQuantity(value);
        if (q.quantity && !q.quantity->isNegative()) apps[name] += Amount::fromQuantity(q.quantity->defaulted());
      }
    }
  }
  for (const auto& [name, a] : apps) {
    if (!a.isZero()) out.resources.emplace(name, a);
  }
  return out;
}

Amount NodeInfo::used(std::string_view resource, const BoundPod* except) const {
  Amount total;
  for (const BoundPod& p : pods) {
    if (except && p.ns == except->ns && p.name == except->name) continue;
    if (auto it = p.requests.find(resource); it != p.requests.end()) total += it->second;
  }
  return total;
}

const NodeInfo* Snapshot::node(std::string_view name) const {
  for (const NodeInfo& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

Snapshot makeSnapshot(const json& nodesDoc, const json* podsDoc) {
  Snapshot s;
  forEachItem(nodesDoc, [&](const json& item) {
    if (!item.is_object()) return;
    const std::string kind = stringOr(item, "kind");
    if (kind == "DeviceClass") {
      readDeviceClass(item, s);
      return;
    }
    if (!kind.empty() && kind != "Node") return;
    const json* metadata = member(item, "metadata");
    NodeInfo n;
    n.name = metadata ? stringOr(*metadata, "name") : "";
    if (n.name.empty()) {
      s.warnings.push_back("a node without metadata.name was skipped");
      return;
    }
    if (const json* labels = metadata ? member(*metadata, "labels") : nullptr; labels && labels->is_object()) {
      for (const auto& [k, v] : labels->items()) n.labels[k] = valueText(v);
    }
    const json* spec = member(item, "spec");
    if (spec) {
      if (const json* u = member(*spec, "unschedulable"); u && u->is_boolean()) n.unschedulable = u->get<bool>();
      if (const json* taints = member(*spec, "taints"); taints && taints->is_array()) {
        for (const json& t : *taints) {
          if (!t.is_object()) continue;
          n.taints.push_back({stringOr(t, "key"), stringOr(t, "value"), stringOr(t, "effect")});
        }
      }
    }
    const json* status = member(item, "status");
    const std::string where = "node " + n.name;
    readResources(status ? member(*status, "capacity") : nullptr, n.capacity, where + " status.capacity", s.warnings);
    const json* allocatable = status ? member(*status, "allocatable") : nullptr;
    if (allocatable) readResources(allocatable, n.allocatable, where + " status.allocatable", s.warnings);
    else n.allocatable = n.capacity;
    s.nodes.push_back(std::move(n));
  });
  if (s.nodes.empty()) {
    const std::string kind = nodesDoc.is_object() ? stringOr(nodesDoc, "kind") : "";
    if (!nodesDoc.is_object() || (kind != "List" && kind != "NodeList" && kind != "Node")) {
      s.error = "expected the output of kubectl get nodes -o json (a List of Node)";
    }
  }

  if (!podsDoc) return s;
  s.podsGiven = true;
  forEachItem(*podsDoc, [&](const json& item) {
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
    auto node = std::find_if(s.nodes.begin(), s.nodes.end(), [&](const NodeInfo& n) { return n.name == nodeName; });
    if (node == s.nodes.end()) {
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
        s.warnings.push_back("pod " + p.ns + "/" + p.name + " " + problem);
      }
      p.requests = std::move(r.resources);
      break;
    }
    node->pods.push_back(std::move(p));
    ++s.boundPods;
  });
  return s;
}

}  // namespace gpuguard::schedule
