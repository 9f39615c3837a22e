#include "audit/object_index.h"

#include <utility>

#include "audit/sha256.h"

namespace gpuguard::audit {

std::string judgeKeyOf(const nlohmann::json& object) {
  if (!object.is_object()) return sha256Hex(object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  nlohmann::json copy = object;
  copy.erase("status");
  const auto meta = copy.find("metadata");
  if (meta != copy.end() && meta->is_object()) {
    meta->erase("managedFields");
    meta->erase("resourceVersion");
  }
  return sha256Hex(copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

ObjectIndex::Freshness ObjectIndex::freshness(const std::string& uid, const std::string& resourceVersion,
                                              Generations now) const {
  std::lock_guard lock(mutex_);
  const auto it = records_.find(uid);
  if (it == records_.end() || !it->second.judged) return Freshness::Stale;
  const ObjectRecord& r = it->second;
  if (r.judgedWith.policy != now.policy || (r.factsSensitive && r.judgedWith.facts != now.facts)) {
    return Freshness::Stale;
  }
  return !resourceVersion.empty() && r.resourceVersion == resourceVersion ? Freshness::Current : Freshness::CheckKey;
}

bool ObjectIndex::keyUnchanged(const std::string& uid, const std::string& judgeKey, const std::string& resourceVersion) {
  std::lock_guard lock(mutex_);
  const auto it = records_.find(uid);
  if (it == records_.end() || !it->second.judged || it->second.judgeKey != judgeKey) return false;
  it->second.resourceVersion = resourceVersion;
  return true;
}

void ObjectIndex::eraseLocked(const std::string& uid) {
  const auto it = records_.find(uid);
  if (it == records_.end()) return;
  const std::string& ns = it->second.ref.ns;
  const auto with = withResults_.find(ns);
  if (with != withResults_.end() && with->second.erase(uid) > 0) {
    dirty_.insert(ns);
    if (with->second.empty()) withResults_.erase(with);
  }
  records_.erase(it);
}

void ObjectIndex::insertLocked(const std::string& uid, ObjectRecord record) {
  if (!record.results.empty()) {
    withResults_[record.ref.ns].insert(uid);
    dirty_.insert(record.ref.ns);
  }
  records_[uid] = std::move(record);
}

void ObjectIndex::record(const std::string& uid, ObjectRecord record) {
  std::lock_guard lock(mutex_);
  eraseLocked(uid);
  insertLocked(uid, std::move(record));
}

void ObjectIndex::forget(const std::string& uid) {
  std::lock_guard lock(mutex_);
  eraseLocked(uid);
}

std::size_t ObjectIndex::forgetUnseen(std::size_t resource, const std::set<std::string>& seen) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> gone;
  for (const auto& [uid, r] : records_) {
    if (r.resource == resource && seen.count(uid) == 0) gone.push_back(uid);
  }
  for (const std::string& uid : gone) eraseLocked(uid);
  return gone.size();
}

void ObjectIndex::inheritLocked(const std::string& uid, std::size_t resource, std::vector<AuditResult> results) {
  if (records_.count(uid) > 0) return;  // judged already: its own results win
  ObjectRecord r;
  r.resource = resource;
  r.ref = results.front().object;
  r.results = std::move(results);
  insertLocked(uid, std::move(r));
}

std::vector<AuditResult> ObjectIndex::resultsOf(const std::string& uid) const {
  std::lock_guard lock(mutex_);
  const auto it = records_.find(uid);
  return it == records_.end() ? std::vector<AuditResult>{} : it->second.results;
}

NamespaceResults ObjectIndex::namespaceResults(const std::string& ns) const {
  NamespaceResults out{ns, {}, 0};
  {
    std::lock_guard lock(mutex_);
    const auto with = withResults_.find(ns);
    if (with == withResults_.end()) return out;
    for (const std::string& uid : with->second) {
      const ObjectRecord& r = records_.at(uid);
      out.results.insert(out.results.end(), r.results.begin(), r.results.end());
      out.dropped += r.dropped;
    }
  }
  sortResults(out.results);
  return out;
}

std::set<std::string> ObjectIndex::takeDirty() {
  std::lock_guard lock(mutex_);
  return std::exchange(dirty_, {});
}

void ObjectIndex::markDirty(const std::string& ns) {
  std::lock_guard lock(mutex_);
  dirty_.insert(ns);
}

bool ObjectIndex::hasDirty() const {
  std::lock_guard lock(mutex_);
  return !dirty_.empty();
}

std::size_t ObjectIndex::factsSensitiveCount() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [uid, r] : records_) n += r.factsSensitive ? 1 : 0;
  return n;
}

std::size_t ObjectIndex::size() const {
  std::lock_guard lock(mutex_);
  return records_.size();
}

std::map<std::size_t, std::size_t> ObjectIndex::objectsPerResource() const {
  std::lock_guard lock(mutex_);
  std::map<std::size_t, std::size_t> out;
  for (const auto& [uid, r] : records_) ++out[r.resource];
  return out;
}

std::map<std::tuple<std::string, std::string, std::string>, std::size_t> ObjectIndex::findingCounts() const {
  std::lock_guard lock(mutex_);
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> out;
  for (const auto& [ns, uids] : withResults_) {
    for (const std::string& uid : uids) {
      for (const AuditResult& r : records_.at(uid).results) {
        if (!r.suppressed) ++out[{r.rule, std::string(severityName(r.severity)), ns}];
      }
    }
  }
  return out;
}

void ObjectIndex::clear() {
  std::lock_guard lock(mutex_);
  records_.clear();
  withResults_.clear();
  dirty_.clear();
}

}  // namespace gpuguard::audit
