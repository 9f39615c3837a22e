// Writes the audit's reports: one namespace's result set in, the API calls
// that make the cluster hold exactly its documents out (server-side apply of
// `gpuguard`, `gpuguard-2`..., DELETE of the ones no longer needed), and
// nothing at all when the set's digest is the one already written.
//
// At takeover, inventory() lists our reports (label
// app.kubernetes.io/managed-by=gpuguard) to learn what is written (names and
// digests, so identical judgements rewrite nothing) and the results they
// hold (their first-seen times carry over).
//
// Every write passes the fence first (the leader's "am I still leading?"):
// a fenced write is skipped and counted; the namespace stays to be written.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "audit/audit_api.h"
#include "audit/report_model.h"
#include "audit/token_bucket.h"

namespace gpuguard::audit {

struct WriterOptions {
  ReportFormat format = ReportFormat::OpenReports;
  ReportBounds bounds;
  std::function<bool()> mayWrite;  // the fence; unset: always
  std::function<void(bool warning, const std::string& message)> log;
};

class ReportWriter {
 public:
  ReportWriter(AuditApi& api, TokenBucket& apiCalls, const std::atomic<bool>& cancel, WriterOptions options);

  struct Inventory {
    bool served = false;               // both report resources answered the list
    // A list failed otherwise than 404 (a timeout, a 503 "storage is (re)initializing" of a
    // CRD just created, a 429): served or not is unknown, so ask again soon.
    bool failed = false;
    bool refused = false;  // 401/403: RBAC; asked again after the not-served wait
    std::vector<AuditResult> results;  // what our reports hold
  };
  // Lists our reports of the configured format; what is written is remembered.
  Inventory inventory();

  // Deletes our reports of the other format found by inventory() (a
  // --audit-report-format switch); call after a complete scan. False while
  // some remain (a failed or fenced delete: try again later).
  bool removeOtherFormat();

  // Makes the namespace's documents those of `set` (none when it has no
  // results). False when a write failed or was fenced: try again later.
  bool write(const NamespaceResults& set);

  std::size_t reportsHeld() const;
  std::map<std::pair<std::string, std::string>, std::uint64_t> writes() const;
  // Forgets what is written (a lost Lease: the next leader takes inventory).
  void clear();

  // The resource of the namespaced and of the cluster-scoped reports.
  AuditedResource reportResource(bool clusterScoped) const;

 private:
  struct Written {
    std::string digest;           // "" when the documents disagree (rewrite)
    std::set<std::string> names;  // gpuguard, gpuguard-2...
  };
  enum class Listed { Yes, NotServed, Refused, Failed };
  Listed listReports(bool clusterScoped, std::vector<AuditResult>& results);
  void listOtherFormat(bool clusterScoped);
  bool applyOne(const nlohmann::json& report, bool clusterScoped);
  bool removeOne(const std::string& ns, const std::string& name, bool clusterScoped);
  bool fenced(const char* verb);
  void count(const char* verb, const char* result);

  AuditApi& api_;
  TokenBucket& apiCalls_;
  const std::atomic<bool>& cancel_;
  WriterOptions options_;
  mutable std::mutex mutex_;  // written_ and writes_ (the worker writes; /metrics reads)
  std::map<std::string, Written> written_;  // by namespace ("" = the cluster report)
  std::map<std::pair<std::string, std::string>, std::uint64_t> writes_;
  // Our reports in the other format: (cluster-scoped, namespace, name).
  std::vector<std::tuple<bool, std::string, std::string>> otherFormat_;
};

}  // namespace gpuguard::audit
