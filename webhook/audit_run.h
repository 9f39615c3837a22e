// The background audit inside gpuguard-webhook (--audit, docs/audit.md):
// its API client, its policy (--audit-policy, else admission's), its judge
// (webhook/audit_judge.h), and, with --leader-elect (the default), the
// Lease: only its holder runs an auditor (cold standby: the others list,
// watch and judge nothing); a lost Lease stops the auditor, a new one starts
// a fresh one (one full scan; the report digests skip identical rewrites).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "audit/auditor.h"
#include "audit/cluster_audit_api.h"
#include "cluster/facts_cache.h"
#include "cluster/leader_election.h"
#include "webhook/flags.h"
#include "webhook/log.h"
#include "webhook/policy_source.h"

namespace gpuguard::webhook {

class AuditRun {
 public:
  AuditRun(const Flags& flags, const Logger& logger, const PolicySource& admissionPolicy, const cluster::FactsCache* facts)
      : flags_(flags), logger_(logger), policy_(&admissionPolicy), facts_(facts) {}
  ~AuditRun();
  AuditRun(const AuditRun&) = delete;
  AuditRun& operator=(const AuditRun&) = delete;

  // For /metrics: the auditor's state (not running while standing by), and the Lease's.
  audit::AuditStatus status() const;
  void stop();

 private:
  friend std::unique_ptr<AuditRun> startAudit(const Flags&, const Logger&, const PolicySource&, const cluster::FactsCache*,
                                              bool&);
  bool startElection(const cluster::ClientConfig& config);
  void startAuditing();  // on taking the Lease (or at once without election)
  void stopAuditing();   // on losing it, and at stop

  const Flags& flags_;
  const Logger& logger_;
  const PolicySource* policy_;
  const cluster::FactsCache* facts_;
  std::unique_ptr<PolicySource> ownPolicy_;  // --audit-policy, when given
  std::unique_ptr<audit::ClusterAuditApi> api_;
  std::unique_ptr<cluster::ApiClient> electionApi_;
  std::unique_ptr<cluster::LeaderElector> elector_;
  std::thread electorThread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;                   // auditor_ (swapped by the elector's thread, read by /metrics)
  std::unique_ptr<audit::Auditor> auditor_;
};

// The audit, started; null when --audit is off, or auto without a cluster
// configuration. `failed` is set when it was asked for and cannot start (no
// configuration, an --audit-policy that does not load, a Lease configuration
// client-go would refuse).
std::unique_ptr<AuditRun> startAudit(const Flags& flags, const Logger& logger, const PolicySource& admissionPolicy,
                                     const cluster::FactsCache* facts, bool& failed);

// The memory the audit may hold (queued bodies, the index, a list page), taken
// from the HTTPS server's share of the container's limit: at most half of it.
std::optional<std::uint64_t> serverMemory(const Flags& flags, std::optional<std::uint64_t> memoryLimit);

// "<POD_NAME, else the host name>_<8 random hex digits>": unique per replica, as client-go requires.
std::string electionIdentity();

}  // namespace gpuguard::webhook
