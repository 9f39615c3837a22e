// The background audit inside gpuguard-webhook (--audit, docs/audit.md):
// its API client, its policy (--audit-policy, else admission's), its judge
// (webhook/audit_judge.h) and the auditor, started and stopped together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "audit/auditor.h"
#include "audit/cluster_audit_api.h"
#include "cluster/facts_cache.h"
#include "webhook/flags.h"
#include "webhook/log.h"
#include "webhook/policy_source.h"

namespace gpuguard::webhook {

class AuditRun {
 public:
  ~AuditRun();
  const audit::Auditor& auditor() const { return *auditor_; }
  void stop();

 private:
  friend std::unique_ptr<AuditRun> startAudit(const Flags&, const Logger&, const PolicySource&, const cluster::FactsCache*,
                                              bool&);
  std::unique_ptr<PolicySource> ownPolicy_;  // --audit-policy, when given
  std::unique_ptr<audit::ClusterAuditApi> api_;
  std::unique_ptr<audit::Auditor> auditor_;
};

// The audit, started; null when --audit is off, or auto without a cluster
// configuration. `failed` is set when it was asked for and cannot start (no
// configuration, an --audit-policy that does not load).
std::unique_ptr<AuditRun> startAudit(const Flags& flags, const Logger& logger, const PolicySource& admissionPolicy,
                                     const cluster::FactsCache* facts, bool& failed);

// The memory the audit may hold (queued bodies, the index, a list page), taken
// from the HTTPS server's share of the container's limit: at most half of it.
std::optional<std::uint64_t> serverMemory(const Flags& flags, std::optional<std::uint64_t> memoryLimit);

}  // namespace gpuguard::webhook
