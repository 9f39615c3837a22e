#include "rules/reach_cache.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace gpuguard {
namespace {

using nlohmann::json;

bool isIdentityField(std::string_view key) {
  return std::find(std::begin(kIdentityFields), std::end(kIdentityFields), key) != std::end(kIdentityFields);
}

bool identical(const json& a, const json& b);

// Objects member by member (both maps are sorted by key), leaving out the
// members `skip` names.
template <class Skip>
bool sameMembers(const json& a, const json& b, Skip skip) {
  auto x = a.begin(), y = b.begin();
  for (;;) {
    while (x != a.end() && skip(x.key())) ++x;
    while (y != b.end() && skip(y.key())) ++y;
    if (x == a.end() || y == b.end()) return x == a.end() && y == b.end();
    if (x.key() != y.key() || !identical(*x, *y)) return false;
    ++x;
    ++y;
  }
}

bool identical(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) return a.size() == b.size() && sameMembers(a, b, [](const std::string&) { return false; });
  if (a.is_array()) return std::equal(a.begin(), a.end(), b.begin(), b.end(), identical);
  return a == b;  // scalars of one type
}

void mix(std::size_t& h, std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

bool skipsMetadata(const std::string& key) { return key == "metadata"; }

std::size_t textHash(const json& v) { return v.is_string() ? std::hash<std::string>()(v.get_ref<const std::string&>()) : v.size(); }

// A few hundred instructions that tell most workloads apart: the kind, the
// generateName, namespace and labels, and the shape of the rest (member
// names, sizes). Objects sameButIdentity() finds the same always agree; two
// that agree are told apart by sameButIdentity() itself.
std::size_t fingerprint(const json& object) {
  std::size_t h = object.size();
  if (!object.is_object()) return h;
  for (auto it = object.begin(); it != object.end(); ++it) {
    mix(h, std::hash<std::string>()(it.key()));
    if (it.key() != "metadata" || !it->is_object()) {
      mix(h, textHash(*it));
      continue;
    }
    for (const char* key : {"generateName", "namespace"}) {
      if (auto v = it->find(key); v != it->end()) mix(h, textHash(*v));
    }
    if (auto labels = it->find("labels"); labels != it->end() && labels->is_object()) {
      for (auto label = labels->begin(); label != labels->end(); ++label) {
        mix(h, std::hash<std::string>()(label.key()));
        mix(h, textHash(*label));
      }
    }
  }
  return h;
}

}  // namespace

bool sameButIdentity(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) return identical(a, b);
  const auto ma = a.find("metadata"), mb = b.find("metadata");
  if (ma == a.end() || mb == b.end() || !ma->is_object() || !mb->is_object()) return identical(a, b);
  return sameMembers(a, b, skipsMetadata) && sameMembers(*ma, *mb, isIdentityField);
}

ReachCache::Slots& ReachCache::slotsFor(const json& object, std::size_t sites, std::string_view ns,
                                        const ClusterFacts& cluster, const Policy& policy) {
  if (&cluster != cluster_ || &policy != policy_) {
    clear();
    cluster_ = &cluster;
    policy_ = &policy;
  }
  std::size_t hash = fingerprint(object);
  mix(hash, std::hash<std::string_view>()(ns));
  mix(hash, sites);
  const auto same = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.hash == hash && e.ns == ns && e.slots.size() == sites && sameButIdentity(e.object, object);
  });
  if (same != entries_.end()) {
    ++hits_;
    std::rotate(entries_.begin(), same, same + 1);
    return entries_.front().slots;
  }
  ++misses_;
  // An object seen once is not copied: only the second of a kind is kept,
  // so a stream of objects all different costs a hash each, no copy.
  if (std::find(sighted_.begin(), sighted_.end(), hash) == sighted_.end()) {
    sighted_[nextSighting_++ % sighted_.size()] = hash;
    scratch_.assign(sites, std::nullopt);
    return scratch_;
  }
  if (entries_.size() == kEntries) entries_.pop_back();
  Entry entry{hash, object, std::string(ns), Slots(sites)};
  if (auto metadata = entry.object.find("metadata"); metadata != entry.object.end() && metadata->is_object()) {
    metadata->erase("managedFields");
  }
  entries_.insert(entries_.begin(), std::move(entry));
  return entries_.front().slots;
}

void ReachCache::clear() {
  entries_.clear();
  sighted_.fill(0);
  cluster_ = nullptr;
  policy_ = nullptr;
}

}  // namespace gpuguard
