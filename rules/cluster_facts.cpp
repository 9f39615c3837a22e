#include "rules/cluster_facts.h"

#include <algorithm>

#include "rules/cluster_reduce.h"
#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxWarnings = 100;

std::string group(const json& object) {
  const std::string apiVersion = stringOr(object, "apiVersion");
  const std::size_t slash = apiVersion.find('/');
  return slash == std::string::npos ? std::string() : apiVersion.substr(0, slash);
}

std::string qualified(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

template <typename Map>
auto* lookup(const Map& map, std::string_view key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : it->second.get();
}

// What a node is, without its name: the key of its node group. The drivers
// whose ResourceSlices name the node are part of it: two nodes alike but for
// their DRA devices are not one group.
std::string groupKey(const NodeFacts& n, const std::vector<std::string>& sliceDrivers) {
  std::string key;
  const auto field = [&](std::string_view s) {
    key += std::to_string(s.size());
    key += ':';
    key += s;
  };
  for (const auto& [k, v] : n.labels) {
    if (isPerNodeLabel(k)) continue;
    field(k);
    field(v);
  }
  key += '|';
  for (const Taint& t : n.taints) {
    field(t.key);
    field(t.value.value_or(""));
    field(t.effect);
  }
  key += n.unschedulable ? "|u|" : "|s|";
  for (const std::string& driver : sliceDrivers) field(driver);
  key += '|';
  for (const auto* list : {&n.capacity, &n.allocatable}) {
    for (const auto& [name, amount] : *list) {
      field(name);
      field(amount.str());
    }
    key += '|';
  }
  return key;
}

}  // namespace

bool isPerNodeLabel(std::string_view key) {
  return key == "kubernetes.io/hostname" || key == "nvidia.com/gfd.timestamp";
}

std::string_view factKindName(FactKind kind) {
  switch (kind) {
    case FactKind::Node: return "nodes";
    case FactKind::NodePool: return "nodepools";
    case FactKind::Namespace: return "namespaces";
    case FactKind::DeviceClass: return "deviceclasses";
    case FactKind::ResourceClaimTemplate: return "resourceclaimtemplates";
    case FactKind::ResourceClaim: return "resourceclaims";
    case FactKind::ResourceSlice: return "resourceslices";
    case FactKind::RuntimeClass: return "runtimeclasses";
  }
  return "";
}

std::optional<FactKind> factKindOf(const json& object) {
  if (!object.is_object()) return std::nullopt;
  const std::string kind = stringOr(object, "kind");
  const std::string g = group(object);
  if (g.empty() && stringOr(object, "apiVersion") == "v1") {
    if (kind == "Node") return FactKind::Node;
    if (kind == "Namespace") return FactKind::Namespace;
  } else if (g == "resource.k8s.io") {
    if (kind == "DeviceClass") return FactKind::DeviceClass;
    if (kind == "ResourceClaimTemplate") return FactKind::ResourceClaimTemplate;
    if (kind == "ResourceClaim") return FactKind::ResourceClaim;
    if (kind == "ResourceSlice") return FactKind::ResourceSlice;
  } else if (g == "karpenter.sh" && kind == "NodePool") {
    return FactKind::NodePool;
  } else if (g == "node.k8s.io" && kind == "RuntimeClass") {
    return FactKind::RuntimeClass;
  }
  return std::nullopt;
}

const std::string* NodeFacts::label(std::string_view key) const {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

const NodeFacts* ClusterFacts::node(std::string_view name) const { return lookup(nodeByName_, name); }
const NamespaceFacts* ClusterFacts::namespaceFacts(std::string_view name) const { return lookup(namespaces_, name); }
const RuntimeClassFacts* ClusterFacts::runtimeClass(std::string_view name) const {
  return lookup(runtimeClasses_, name);
}
const DeviceClassFacts* ClusterFacts::deviceClass(std::string_view name) const { return lookup(classes_, name); }

const ClaimFacts* ClusterFacts::claimTemplate(std::string_view ns, std::string_view name) const {
  return lookup(templates_, qualified(ns, name));
}

const ClaimFacts* ClusterFacts::claim(std::string_view ns, std::string_view name) const {
  return lookup(claims_, qualified(ns, name));
}

const std::string* ClusterFacts::classServing(std::string_view resource) const {
  auto it = servedBy_.find(resource);
  return it == servedBy_.end() ? nullptr : &it->second;
}

const std::vector<std::string>& ClusterFacts::sliceDriversOn(std::string_view name) const {
  auto it = sliceDrivers_.find(name);
  return it == sliceDrivers_.end() ? anyNodeDrivers_ : it->second;
}

const std::vector<std::string>& ClusterFacts::classesSelecting(std::string_view driver) const {
  static const std::vector<std::string> kNone;
  auto it = classesByDriver_.find(driver);
  return it == classesByDriver_.end() ? kNone : it->second;
}

std::size_t ClusterFactsBuilder::add(const json& object) {
  std::size_t taken = 0;
  const json* items = arrayAt(object, "items");
  if (items && stringOr(object, "kind").ends_with("List")) {
    for (const json& item : *items) addOne(item, taken);
  } else {
    addOne(object, taken);
  }
  return taken;
}

void ClusterFactsBuilder::addOne(const json& object, std::size_t& taken) {
  const std::optional<FactKind> kind = factKindOf(object);
  if (!kind) return;
  const json* metadata = objectAt(object, "metadata");
  const std::string name = metadata ? stringOr(*metadata, "name") : std::string();
  if (name.empty()) {
    warn({std::string(factKindName(*kind)) + ": an object without metadata.name was skipped"});
    return;
  }
  const std::string key = qualified(metadata ? stringOr(*metadata, "namespace") : std::string(), name);
  std::vector<std::string> warnings;
  switch (*kind) {
    case FactKind::Node: nodes_[name] = std::make_shared<const NodeFacts>(reduceNode(object, warnings)); break;
    case FactKind::NodePool:
      nodePools_[name] = std::make_shared<const NodePoolFacts>(reduceNodePool(object, warnings));
      break;
    case FactKind::Namespace:
      namespaces_[name] = std::make_shared<const NamespaceFacts>(reduceNamespace(object, warnings));
      break;
    case FactKind::DeviceClass: classes_[name] = std::make_shared<const DeviceClassFacts>(reduceDeviceClass(object)); break;
    case FactKind::ResourceClaimTemplate:
      templates_[key] = std::make_shared<const ClaimFacts>(reduceClaimTemplate(object));
      break;
    case FactKind::ResourceClaim: claims_[key] = std::make_shared<const ClaimFacts>(reduceClaim(object)); break;
    case FactKind::ResourceSlice:
      slices_[name] = std::make_shared<const ResourceSliceFacts>(reduceResourceSlice(object));
      break;
    case FactKind::RuntimeClass:
      runtimeClasses_[name] = std::make_shared<const RuntimeClassFacts>(reduceRuntimeClass(object));
      break;
  }
  listed_.insert(*kind);
  ++taken;
  warn(std::move(warnings));
}

bool ClusterFactsBuilder::remove(FactKind kind, std::string_view ns, std::string_view name) {
  const std::string key = qualified(ns, name);
  switch (kind) {
    case FactKind::Node: return nodes_.erase(std::string(name)) > 0;
    case FactKind::NodePool: return nodePools_.erase(std::string(name)) > 0;
    case FactKind::Namespace: return namespaces_.erase(std::string(name)) > 0;
    case FactKind::DeviceClass: return classes_.erase(std::string(name)) > 0;
    case FactKind::ResourceClaimTemplate: return templates_.erase(key) > 0;
    case FactKind::ResourceClaim: return claims_.erase(key) > 0;
    case FactKind::ResourceSlice: return slices_.erase(std::string(name)) > 0;
    case FactKind::RuntimeClass: return runtimeClasses_.erase(std::string(name)) > 0;
  }
  return false;
}

void ClusterFactsBuilder::clear(FactKind kind) {
  switch (kind) {
    case FactKind::Node: nodes_.clear(); break;
    case FactKind::NodePool: nodePools_.clear(); break;
    case FactKind::Namespace: namespaces_.clear(); break;
    case FactKind::DeviceClass: classes_.clear(); break;
    case FactKind::ResourceClaimTemplate: templates_.clear(); break;
    case FactKind::ResourceClaim: claims_.clear(); break;
    case FactKind::ResourceSlice: slices_.clear(); break;
    case FactKind::RuntimeClass: runtimeClasses_.clear(); break;
  }
}

std::size_t ClusterFactsBuilder::size(FactKind kind) const {
  switch (kind) {
    case FactKind::Node: return nodes_.size();
    case FactKind::NodePool: return nodePools_.size();
    case FactKind::Namespace: return namespaces_.size();
    case FactKind::DeviceClass: return classes_.size();
    case FactKind::ResourceClaimTemplate: return templates_.size();
    case FactKind::ResourceClaim: return claims_.size();
    case FactKind::ResourceSlice: return slices_.size();
    case FactKind::RuntimeClass: return runtimeClasses_.size();
  }
  return 0;
}

void ClusterFactsBuilder::warn(std::vector<std::string> lines) {
  for (std::string& line : lines) {
    if (warnings_.size() < kMaxWarnings) warnings_.push_back(std::move(line));
  }
}

namespace {

void addOnce(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

void ClusterFactsBuilder::indexSlices(ClusterFacts& facts) const {
  for (const auto& [name, slice] : slices_) {
    if (slice->devices == 0 || slice->driver.empty()) continue;  // a pool's empty slice serves nothing
    addOnce(slice->nodeName.empty() ? facts.anyNodeDrivers_ : facts.sliceDrivers_[slice->nodeName], slice->driver);
  }
  std::sort(facts.anyNodeDrivers_.begin(), facts.anyNodeDrivers_.end());
  for (auto& [node, drivers] : facts.sliceDrivers_) {
    for (const std::string& driver : facts.anyNodeDrivers_) addOnce(drivers, driver);
    std::sort(drivers.begin(), drivers.end());
  }
  for (const auto& [name, deviceClass] : classes_) {
    for (const std::string& driver : deviceClass->drivers) addOnce(facts.classesByDriver_[driver], name);
  }
}

std::shared_ptr<const ClusterFacts> ClusterFactsBuilder::build() const {
  auto facts = std::make_shared<ClusterFacts>();
  facts->source_ = source_;
  facts->listed_ = listed_;
  indexSlices(*facts);
  facts->nodeByName_ = nodes_;
  facts->nodes_.reserve(nodes_.size());
  std::map<std::string, std::size_t> groupOf;
  for (const auto& [name, node] : nodes_) {
    facts->nodes_.push_back(node);
    auto [it, added] = groupOf.emplace(groupKey(*node, facts->sliceDriversOn(name)), facts->groups_.size());
    if (added) facts->groups_.push_back(NodeGroup{node.get(), {}});
    facts->groups_[it->second].members.push_back(node.get());
  }
  facts->nodePools_.reserve(nodePools_.size());
  for (const auto& [name, pool] : nodePools_) facts->nodePools_.push_back(pool);
  facts->namespaces_ = namespaces_;
  facts->runtimeClasses_ = runtimeClasses_;
  facts->classes_ = classes_;
  facts->templates_ = templates_;
  facts->claims_ = claims_;
  for (const auto& [name, deviceClass] : classes_) {
    if (!deviceClass->extendedResourceName.empty()) facts->servedBy_[deviceClass->extendedResourceName] = name;
  }
  return facts;
}

}  // namespace gpuguard
