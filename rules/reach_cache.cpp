#include "rules/reach_cache.h"

#include <algorithm>
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

}  // namespace

bool sameButIdentity(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) return identical(a, b);
  const auto ma = a.find("metadata"), mb = b.find("metadata");
  if (ma == a.end() || mb == b.end() || !ma->is_object() || !mb->is_object()) return identical(a, b);
  return sameMembers(a, b, [](const std::string& key) { return key == "metadata"; }) &&
         sameMembers(*ma, *mb, [](const std::string& key) { return isIdentityField(key); });
}

ReachCache::Slots& ReachCache::slotsFor(const json& object, std::size_t sites, std::string_view ns,
                                        const ClusterFacts& cluster, const Policy& policy) {
  if (&cluster != cluster_ || &policy != policy_) {
    clear();
    cluster_ = &cluster;
    policy_ = &policy;
  }
  const auto same = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.ns == ns && e.slots.size() == sites && sameButIdentity(e.object, object);
  });
  if (same != entries_.end()) {
    ++hits_;
    std::rotate(entries_.begin(), same, same + 1);
    return entries_.front().slots;
  }
  ++misses_;
  if (entries_.size() == kEntries) entries_.pop_back();
  Entry entry{object, std::string(ns), Slots(sites)};
  if (auto metadata = entry.object.find("metadata"); metadata != entry.object.end() && metadata->is_object()) {
    metadata->erase("managedFields");
  }
  entries_.insert(entries_.begin(), std::move(entry));
  return entries_.front().slots;
}

void ReachCache::clear() {
  entries_.clear();
  cluster_ = nullptr;
  policy_ = nullptr;
}

}  // namespace gpuguard
