// What the audit knows of each audited object (by uid): where it is, what
// it was judged with and the results it has, and which namespaces' reports
// must be looked at again. Small per object (no body is kept): a reference,
// the resourceVersion, a judge key, two generations and the results.
//
// Re-judging is skipped when nothing it depends on changed: the same
// resourceVersion, or the same judge key (the object without status,
// managedFields and resourceVersion: a Pod's status churn costs a hash, not
// a judgement), the same policy generation and, for an object whose findings
// can depend on the cluster's facts, the same facts generation.
//
// Thread-safe (one mutex of its own: the reflectors ask, the worker records;
// admission never touches it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/report_model.h"

namespace gpuguard::audit {

// What a judgement was made with.
struct Generations {
  std::uint64_t policy = 0;
  std::uint64_t facts = 0;
};

struct ObjectRecord {
  std::size_t resource = 0;  // the index of its resource in the auditor's table
  AuditedObject ref;
  std::string resourceVersion;
  std::string judgeKey;
  Generations judgedWith;
  bool factsSensitive = false;
  bool judged = false;  // false: results inherited from a report at takeover, not judged yet
  std::vector<AuditResult> results;
  std::size_t dropped = 0;
};

// SHA-256 of the object without status, metadata.managedFields and
// metadata.resourceVersion (annotations count: suppressions live there).
std::string judgeKeyOf(const nlohmann::json& object);

class ObjectIndex {
 public:
  enum class Freshness {
    Current,   // same resourceVersion and generations: nothing to do
    CheckKey,  // a new resourceVersion: judge only if the judge key changed (keyUnchanged)
    Stale,     // never judged, or judged with another policy (or facts, if they matter)
  };
  Freshness freshness(const std::string& uid, const std::string& resourceVersion, Generations now) const;
  // True (and the new resourceVersion remembered) when `judgeKey` is the one judged.
  bool keyUnchanged(const std::string& uid, const std::string& judgeKey, const std::string& resourceVersion);

  // Replaces the object's record; its namespace's report is looked at again
  // when it had or has results.
  void record(const std::string& uid, ObjectRecord record);
  // The object is gone (deleted, or fixed into nothing audited).
  void forget(const std::string& uid);
  // After a complete list of `resource`: forgets its objects not in `seen`
  // (deleted while no watch was open); returns how many.
  std::size_t forgetUnseen(std::size_t resource, const std::set<std::string>& seen);
  // Results read back from our reports at takeover: kept (as not judged)
  // until their object is judged or its resource's list proves it gone.
  // `resourceOf` maps a result's object to its resource index, or nullopt
  // (not audited: dropped).
  template <typename ResourceOf>
  void inherit(const std::vector<AuditResult>& results, ResourceOf&& resourceOf);

  std::vector<AuditResult> resultsOf(const std::string& uid) const;
  // The namespace's results, sorted (report_model sortResults), with the dropped count.
  NamespaceResults namespaceResults(const std::string& ns) const;
  // The namespaces to look at again since the last call.
  std::set<std::string> takeDirty();
  void markDirty(const std::string& ns);
  bool hasDirty() const;
  // How many objects have findings that may depend on the cluster facts.
  std::size_t factsSensitiveCount() const;

  std::size_t size() const;
  std::map<std::size_t, std::size_t> objectsPerResource() const;
  // (rule, severity name, namespace) -> results not suppressed.
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> findingCounts() const;
  void clear();

 private:
  void eraseLocked(const std::string& uid);
  void insertLocked(const std::string& uid, ObjectRecord record);
  void inheritLocked(const std::string& uid, std::size_t resource, std::vector<AuditResult> results);

  mutable std::mutex mutex_;
  std::map<std::string, ObjectRecord> records_;                 // by uid
  std::map<std::string, std::set<std::string>> withResults_;    // namespace -> uids with results
  std::set<std::string> dirty_;
};

template <typename ResourceOf>
void ObjectIndex::inherit(const std::vector<AuditResult>& results, ResourceOf&& resourceOf) {
  std::map<std::string, std::vector<AuditResult>> byUid;
  for (const AuditResult& r : results) {
    if (!r.object.uid.empty()) byUid[r.object.uid].push_back(r);
  }
  std::lock_guard lock(mutex_);
  for (auto& [uid, own] : byUid) {
    const auto resource = resourceOf(own.front().object);
    if (resource) inheritLocked(uid, *resource, std::move(own));
  }
}

}  // namespace gpuguard::audit
