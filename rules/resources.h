// A pod's resources as the API server and the scheduler see them: a
// container's limits and requests after Pod defaulting (SetDefaults_Pod copies
// a limit without a request into the requests), the whole units a container
// asks for, and the pod's effective request (resource.PodRequests). The
// quantities themselves are decoded by rules/k8s/quantity.h.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"
#include "rules/k8s/quantity.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

// A resource the quantity rules judge: every extended resource (the API
// server counts them all in whole units) and any GPU resource the policy names.
bool isJudgedResource(std::string_view name, const Policy& policy);
struct ResourceEntry {
  std::string name;
  const nlohmann::json* value = nullptr;
  FieldPath path;          // ...resources.limits[nvidia.com/gpu]
  bool defaulted = false;  // a Pod request copied from the limit by the API server
};

// A container's limits and requests, as the API server sees them after
// defaulting: in a Pod (site.isPod), a limit without a request also becomes
// the request.
// Both lists are sorted by name, as a JSON object's members are (nlohmann::json
// keeps them in a std::map), except that Pod defaulting appends the copied
// requests after the written ones (a second sorted run).
struct ContainerResources {
  FieldPath path;  // ...resources
  std::vector<ResourceEntry> limits;
  std::vector<ResourceEntry> requests;
  std::size_t writtenRequests = 0;  // requests[0, writtenRequests) were written; the rest defaulted

  const ResourceEntry* limit(std::string_view name) const;
  const ResourceEntry* request(std::string_view name) const;
};
// Read once per container and kept with it: the reference lives as long as
// `container`.
const ContainerResources& resourcesOf(const ContainerRef& container, bool podDefaulting);

// The loop the quantity rules share: `visit(resources)` for every container of
// every pod site, in document order, with its resources as written (no Pod
// defaulting: those rules judge what the author wrote).
template <typename Visit>
void forEachContainerResources(const std::vector<PodSite>& sites, Visit&& visit) {
  for (const PodSite& site : sites) {
    for (const ContainerRef& c : site.containers) visit(resourcesOf(c, false));
  }
}

// Every entry of a container's resources: limits first, then requests.
template <typename Visit>
void forEachResourceEntry(const ContainerResources& resources, Visit&& visit) {
  for (const ResourceEntry& e : resources.limits) visit(e);
  for (const ResourceEntry& e : resources.requests) visit(e);
}

// Each resource a container asks for, once: by its limit, or by its request
// when it has no limit (the entry requestedUnits reads).
template <typename Visit>
void forEachRequestedResource(const ContainerResources& r, Visit&& visit) {
  for (const ResourceEntry& e : r.limits) visit(e);
  for (const ResourceEntry& e : r.requests) {
    if (!r.limit(e.name)) visit(e);
  }
}

// The whole-unit count a container asks of a resource: the limit if set,
// else the request; fractional values round up; unparseable ones count 0.
long long requestedUnits(const ContainerResources& resources, std::string_view name);

// Unit counts are never negative; a sum of quantities near 2^63 (which
// ceilToInt64 saturates to) stays at the maximum instead of wrapping.
long long addUnits(long long a, long long b);

// GPUs (policy.gpuResources) one container asks for, summed over GPU names.
long long containerGpus(const ContainerRef& container, const Policy& policy, bool podDefaulting);

// The pod's effective request of one resource, as the scheduler computes it
// (k8s.io/component-helpers resource.PodRequests): the larger of the sum of
// app containers and sidecars, and the peak while init containers run, where
// an init container runs beside the sidecars declared before it. Ephemeral
// containers count nothing.
long long podRequestUnits(const PodSite& site, std::string_view resourceName);

// podRequestUnits of every resource name `select` accepts, in one pass over
// the containers (linear in the entries: a pod may name thousands), in order
// of first appearance.
struct ResourceUnits {
  std::string name;
  long long units = 0;
};
std::vector<ResourceUnits> podRequestUnitsByName(const PodSite& site,
                                                const std::function<bool(std::string_view)>& select);

// The pod's effective GPU request: podRequestUnits summed over the GPU
// resources (policy.gpuResources) the pod names. Like the scheduler, each
// resource is taken on its own (an init container's nvidia.com/gpu does not
// offset an app container's nvidia.com/mig-1g.10gb).
long long podGpus(const PodSite& site, const Policy& policy);

// True when any container asks for more than zero of a GPU resource.
bool requestsGpu(const PodSite& site, const Policy& policy);

}  // namespace gpuguard
