#include "webhook/audit_run.h"

#include <algorithm>
#include <set>

#include "webhook/audit_judge.h"

namespace gpuguard::webhook {

namespace {

// What the audit holds besides its queue: the index (~200 B an object plus its
// results), a list page of 100 objects, the reports of one namespace.
constexpr std::uint64_t kAuditBaseBytes = 16u << 20;

std::optional<cluster::ClientConfig> auditClientConfig(const Flags& flags, const Logger& logger, bool& failed) {
  try {
    std::optional<cluster::ClientConfig> config =
        cluster::findClientConfig({flags.kubeconfig, flags.kubeContext}, cluster::Environment::process());
    if (!config && flags.audit.mode == AuditFlags::Mode::On) {
      logger.error("--audit=on: no kubeconfig and no service account to reach the API server with");
      failed = true;
    }
    return config;
  } catch (const cluster::ConfigError& e) {
    logger.error("--audit: cannot read the cluster configuration").str("error", e.what());
    failed = flags.audit.mode == AuditFlags::Mode::On || flags.kubeconfig || flags.kubeContext;
    return std::nullopt;
  }
}

audit::AuditorOptions auditorOptions(const Flags& flags, const Logger& logger, const PolicySource& policy,
                                     const cluster::FactsCache* facts) {
  const AuditFlags& a = flags.audit;
  audit::AuditorOptions o;
  o.resources = audit::withExtraResources(a.extraResources);
  o.excludeNamespaces = std::set<std::string>(a.excludeNamespaces.begin(), a.excludeNamespaces.end());
  o.format = a.reportFormat;
  o.bounds.maxResultsPerObject = a.maxResults;
  o.resyncInterval = a.resyncInterval;
  o.pendingBytes = a.pendingBytes;
  o.judgeQps = a.judgeQps;
  o.apiQps = a.apiQps;
  o.apiBurst = a.apiBurst;
  o.policyGeneration = [&policy] { return policy.reloadSuccesses(); };
  if (facts) o.facts = [facts] { return facts->snapshot(); };
  o.log = [&logger](bool warning, const std::string& message) { logger.log(warning ? LogLevel::Warn : LogLevel::Info, message); };
  return o;
}

}  // namespace

AuditRun::~AuditRun() { stop(); }

void AuditRun::stop() {
  if (auditor_) auditor_->stop();
  if (ownPolicy_) ownPolicy_->stop();
}

std::unique_ptr<AuditRun> startAudit(const Flags& flags, const Logger& logger, const PolicySource& admissionPolicy,
                                     const cluster::FactsCache* facts, bool& failed) {
  if (flags.audit.mode == AuditFlags::Mode::Off) return nullptr;
  std::optional<cluster::ClientConfig> config = auditClientConfig(flags, logger, failed);
  if (!config) return nullptr;
  auto run = std::make_unique<AuditRun>();
  const PolicySource* policy = &admissionPolicy;
  if (flags.audit.policy) {
    try {
      run->ownPolicy_ = std::make_unique<PolicySource>(flags.audit.policy, logger);
    } catch (const std::exception& e) {
      logger.error("cannot load the audit policy").str("path", *flags.audit.policy).str("error", e.what());
      failed = true;
      return nullptr;
    }
    run->ownPolicy_->start(flags.policyPollInterval);
    policy = run->ownPolicy_.get();
  }
  logger.info("background audit: listing and watching")
      .str("from", config->describe)
      .str("reports", std::string(audit::reportFormatName(flags.audit.reportFormat)))
      .str("policy", flags.audit.policy.value_or(flags.policy.value_or("(built-in defaults)")));
  run->api_ = std::make_unique<audit::ClusterAuditApi>(std::move(*config));
  run->auditor_ = std::make_unique<audit::Auditor>(*run->api_, auditJudge(*policy),
                                                   auditorOptions(flags, logger, *policy, facts));
  run->auditor_->start();
  return run;
}

std::optional<std::uint64_t> serverMemory(const Flags& flags, std::optional<std::uint64_t> memoryLimit) {
  if (!memoryLimit || flags.audit.mode == AuditFlags::Mode::Off) return memoryLimit;
  const std::uint64_t reserve = std::min<std::uint64_t>(flags.audit.pendingBytes + kAuditBaseBytes, *memoryLimit / 2);
  return *memoryLimit - reserve;
}

}  // namespace gpuguard::webhook
