// Where the pods of one workload can go, kept across judge() calls.
//
// The replicas of a Deployment, the pods of a Job or of a scale-up reach
// the admission webhook as objects that differ only in who they are (name,
// uid, resourceVersion, managedFields...), and each was judged against every
// node group of the cluster anew: a third of a review's work with facts on
// (docs/performance.md). A ReachCache keeps the reach (rules/cluster_reach.h)
// of the pod sites of the last few workloads judged more than once (the
// first object of a kind is only fingerprinted: a stream of objects all
// different costs no copy); an object identical to one of them but for its identity
// fields gets its reach back. The key is
// the whole object, so whatever the placement reads (spec, labels,
// annotations, the kind) is in it; only fields that name one object and that
// the reach never reads are left out (kIdentityFields).
//
// A cache serves one ClusterFacts snapshot and one Policy: its owner (one
// thread of the webhook) clears it when either changes. It also clears
// itself when judge() brings another address, which catches the plain
// misuse, not the address of a freed snapshot reused by a new one: hence the
// owner's duty.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_reach.h"

namespace gpuguard {

class Policy;

// metadata fields that name one object and nothing the placement reads.
inline constexpr std::string_view kIdentityFields[] = {"creationTimestamp", "managedFields", "name",
                                                      "resourceVersion",   "selfLink",      "uid"};

// The same JSON, value for value and type for type (2 and 2.0 differ, as
// they may for a quantity), but for metadata's kIdentityFields.
bool sameButIdentity(const nlohmann::json& a, const nlohmann::json& b);

class ReachCache {
 public:
  // One reach per pod site of the object (findPodSites order), filled as
  // the rules ask for them.
  using Slots = std::vector<std::optional<PodReach>>;

  // The slots of `object` judged in namespace `ns`: those of an earlier
  // object that is the same but for its identity, else empty ones — kept
  // (the least recently used entry makes room) when an object alike was
  // seen among the last kSightings, else not. Valid until the next call.
  Slots& slotsFor(const nlohmann::json& object, std::size_t sites, std::string_view ns, const ClusterFacts& cluster,
                  const Policy& policy);
  void clear();

  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  std::size_t kept() const { return entries_.size(); }

  // Entries kept: a few workloads admitted in turn.
  static constexpr std::size_t kEntries = 4;
  // Objects remembered by fingerprint only, to tell a second of a kind.
  static constexpr std::size_t kSightings = 16;

 private:
  struct Entry {
    std::size_t hash;       // fingerprint of the object, the namespace and the site count
    nlohmann::json object;  // without metadata.managedFields (the largest identity field)
    std::string ns;
    Slots slots;
  };
  const ClusterFacts* cluster_ = nullptr;
  const Policy* policy_ = nullptr;
  std::vector<Entry> entries_;  // most recently used first
  std::array<std::size_t, kSightings> sighted_{};  // hashes of objects seen, not kept
  std::size_t nextSighting_ = 0;
  Slots scratch_;               // the slots of an object not kept
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace gpuguard
