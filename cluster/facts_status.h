// What the watched cache (facts_cache.h) reports about itself, for the
// webhook's metrics and logs; no dependency on the facts model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuguard::cluster {

enum class ResourceState {
  Starting,     // not listed yet
  Synced,       // listed, watch open (or reconnecting after a clean end)
  NotServed,    // 404: the API does not serve it; synced, empty
  Relisting,    // 410 Gone: listing again; the last snapshot stays
  Refused,      // 401/403: RBAC or credentials; facts withdrawn
  Unreachable,  // a transport error or a 5xx; facts withdrawn
};
inline std::string_view resourceStateName(ResourceState state) {
  switch (state) {
    case ResourceState::Starting: return "starting";
    case ResourceState::Synced: return "synced";
    case ResourceState::NotServed: return "not served";
    case ResourceState::Relisting: return "relisting";
    case ResourceState::Refused: return "refused";
    case ResourceState::Unreachable: return "unreachable";
  }
  return "?";
}

struct ResourceStatus {
  std::string resource;  // "nodes", "nodepools.karpenter.sh"
  ResourceState state = ResourceState::Starting;
  std::size_t objects = 0;
  std::uint64_t watchRestarts = 0;
  std::uint64_t relists = 0;
  std::string lastError;
};

struct FactsStatus {
  std::vector<ResourceStatus> resources;
  bool synced = false;             // a snapshot is published
  double ageSeconds = 0;           // since the facts were last known current (0 while every watch is open)
  std::uint64_t rebuilds = 0;
};

}  // namespace gpuguard::cluster
