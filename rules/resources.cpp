#include "rules/resources.h"

#include <algorithm>
#include <limits>
#include <span>
#include <unordered_map>

#include "rules/k8s/names.h"

namespace gpuguard {
namespace {

using nlohmann::json;

void collect(const json& resources, const char* list, const FieldPath& base, std::vector<ResourceEntry>& out) {
  auto it = resources.find(list);
  if (it == resources.end() || !it->is_object()) return;
  const FieldPath listPath = base.field(list);
  for (const auto& [name, value] : it->items()) out.push_back({name, &value, listPath.key(name), false});
}

// A binary search: `entries` are sorted by name. A container may list
// thousands of resources, and rules look each one up.
const ResourceEntry* findSorted(std::span<const ResourceEntry> entries, std::string_view name) {
  auto it = std::lower_bound(entries.begin(), entries.end(), name,
                             [](const ResourceEntry& e, std::string_view n) { return e.name < n; });
  return it != entries.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

bool isJudgedResource(std::string_view name, const Policy& policy) {
  return isExtendedResourceName(name) || policy.isGpuResource(name);
}

const ResourceEntry* ContainerResources::limit(std::string_view name) const { return findSorted(limits, name); }

const ResourceEntry* ContainerResources::request(std::string_view name) const {
  const std::span<const ResourceEntry> all(requests);
  if (const ResourceEntry* e = findSorted(all.first(writtenRequests), name)) return e;
  return findSorted(all.subspan(writtenRequests), name);
}

namespace {

// Puts the resources an operator translates into the lists, replacing any
// of the same name, and keeps the lists sorted by name.
void addOperatorResources(const OperatorResources& fromOperator, ContainerResources& out) {
  for (const OperatorResource& r : fromOperator.entries) {
    std::vector<ResourceEntry>& list = r.limit ? out.limits : out.requests;
    std::erase_if(list, [&](const ResourceEntry& e) { return e.name == r.name; });
    list.push_back({r.name, r.value, r.path, false});
  }
  auto byName = [](const ResourceEntry& a, const ResourceEntry& b) { return a.name < b.name; };
  std::stable_sort(out.limits.begin(), out.limits.end(), byName);
  std::stable_sort(out.requests.begin(), out.requests.end(), byName);
}

ContainerResources readResources(const ContainerRef& container, bool defaults) {
  ContainerResources out;
  out.path = container.fromOperator ? container.fromOperator->path : container.path.field(container.resourcesKey);
  auto it = container.container->find(container.resourcesKey);
  const bool own = it != container.container->end() && it->is_object();
  if (own) {
    const FieldPath ownPath = container.path.field(container.resourcesKey);
    collect(*it, "limits", ownPath, out.limits);
    collect(*it, "requests", ownPath, out.requests);
  }
  if (container.fromOperator) addOperatorResources(*container.fromOperator, out);
  out.writtenRequests = out.requests.size();
  if (defaults) {  // appended in limits' order: a second sorted run
    for (const ResourceEntry& l : out.limits) {
      if (!out.request(l.name)) out.requests.push_back({l.name, l.value, l.path, true});
    }
  }
  return out;
}

}  // namespace

const ContainerResources& resourcesOf(const ContainerRef& container, bool podDefaulting) {
  // SetDefaults_Pod: containers and init containers only, per missing key.
  const bool defaults = podDefaulting && container.kind != ContainerKind::Ephemeral;
  std::shared_ptr<const ContainerResources>& kept =
      defaults ? container.resourcesDefaulted : container.resourcesAsWritten;
  if (!kept) kept = std::make_shared<const ContainerResources>(readResources(container, defaults));
  return *kept;
}

long long requestedUnits(const ContainerResources& resources, std::string_view name) {
  const ResourceEntry* e = resources.limit(name);
  if (!e) e = resources.request(name);
  if (!e) return 0;
  QuantityValue q = decodeQuantity(*e->value);
  if (!q.quantity || q.quantity->isNegative()) return 0;
  return q.quantity->ceilToInt64();
}

long long addUnits(long long a, long long b) {
  long long sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<long long>::max() : sum;
}

long long containerGpus(const ContainerRef& container, const Policy& policy, bool podDefaulting) {
  const ContainerResources& r = resourcesOf(container, podDefaulting);
  long long total = 0;
  forEachRequestedResource(r, [&](const ResourceEntry& e) {
    if (policy.isGpuResource(e.name)) total = addUnits(total, requestedUnits(r, e.name));
  });
  return total;
}

std::vector<ResourceUnits> podRequestUnitsByName(const PodSite& site,
                                                const std::function<bool(std::string_view)>& select) {
  // One pass over the containers, in order (init containers come first).
  // Per name, a container that does not list it changes nothing, so each
  // name's tally only sees the containers that list it.
  struct Tally {
    long long running = 0;   // app containers and sidecars: they run together
    long long sidecars = 0;  // sidecars started so far
    long long initPeak = 0;  // the most any init phase needs
  };
  std::vector<std::pair<std::string_view, Tally>> tallies;  // in order of first appearance
  std::unordered_map<std::string_view, std::size_t> index;
  for (const ContainerRef& c : site.containers) {
    if (c.kind == ContainerKind::Ephemeral) continue;  // ephemeral containers get no resources
    const ContainerResources& r = resourcesOf(c, site.isPod);
    forEachRequestedResource(r, [&](const ResourceEntry& e) {
      if (!select(e.name)) return;
      const long long n = requestedUnits(r, e.name);
      const auto [at, fresh] = index.try_emplace(e.name, tallies.size());
      if (fresh) tallies.emplace_back(e.name, Tally{});
      Tally& t = tallies[at->second].second;
      if (c.kind == ContainerKind::Init) {
        t.initPeak = std::max(t.initPeak, addUnits(n, t.sidecars));
        return;
      }
      t.running = addUnits(t.running, n);
      if (c.kind == ContainerKind::Sidecar) {
        t.sidecars = addUnits(t.sidecars, n);
        t.initPeak = std::max(t.initPeak, t.sidecars);
      }
    });
  }
  std::vector<ResourceUnits> out;
  out.reserve(tallies.size());
  for (const auto& [name, t] : tallies) out.push_back({std::string(name), std::max(t.running, t.initPeak)});
  return out;
}

long long podRequestUnits(const PodSite& site, std::string_view resourceName) {
  const auto units = podRequestUnitsByName(site, [&](std::string_view name) { return name == resourceName; });
  return units.empty() ? 0 : units.front().units;
}

long long podGpus(const PodSite& site, const Policy& policy) {
  long long total = 0;
  for (const ResourceUnits& u :
       podRequestUnitsByName(site, [&](std::string_view name) { return policy.isGpuResource(name); })) {
    total = addUnits(total, u.units);
  }
  return total;
}

bool requestsGpu(const PodSite& site, const Policy& policy) {
  return std::any_of(site.containers.begin(), site.containers.end(), [&](const ContainerRef& c) {
    return c.kind != ContainerKind::Ephemeral && containerGpus(c, policy, site.isPod) > 0;
  });
}

}  // namespace gpuguard
