#include "webhook/audit_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
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

cluster::LeaderElectionConfig electionConfig(const AuditFlags& a, const cluster::ClientConfig& client) {
  cluster::LeaderElectionConfig c;
  const char* podNamespace = std::getenv("POD_NAMESPACE");
  c.namespaceName = a.leaseNamespace ? *a.leaseNamespace
                    : podNamespace && *podNamespace ? std::string(podNamespace)
                                                    : client.namespaceName;
  c.name = a.leaseName;
  c.identity = a.identity ? *a.identity : electionIdentity();
  c.leaseDuration = a.leaseDuration;
  c.renewDeadline = a.renewDeadline;
  c.retryPeriod = a.retryPeriod;
  c.labels = {{"app.kubernetes.io/name", "gpuguard"}};
  return c;
}

}  // namespace

std::string electionIdentity() {
  const char* pod = std::getenv("POD_NAME");
  std::string base = pod && *pod ? pod : "";
  if (base.empty()) {
    char host[256] = {};
    base = gethostname(host, sizeof host - 1) == 0 && host[0] ? host : "gpuguard-webhook";
  }
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x", static_cast<unsigned>(random()));
  return base + suffix;
}

AuditRun::~AuditRun() { stop(); }

void AuditRun::startAuditing() {
  audit::AuditorOptions options = auditorOptions(flags_, logger_, *policy_, facts_);
  // On the auditor's thread, not the elector's: discovery must not hold up a renewal.
  options.resolveResources = [this](std::vector<audit::AuditedResource> resources, const std::atomic<bool>& cancel) {
    const cluster::Discovery served = cluster::discover(api_->client(), audit::groupsOf(resources), &cancel);
    for (const auto& [group, error] : served.errors) {
      logger_.warn("background audit: discovery failed; the table's versions are tried").str("group", group).str("error", error);
    }
    return audit::resolveServed(std::move(resources), served);
  };
  if (elector_) options.mayWrite = [this] { return elector_->mayWrite(); };
  auto auditor = std::make_unique<audit::Auditor>(*api_, auditJudge(*policy_), std::move(options));
  auditor->start();
  std::lock_guard lock(mutex_);
  auditor_ = std::move(auditor);
}

void AuditRun::stopAuditing() {
  std::unique_ptr<audit::Auditor> auditor;
  {
    std::lock_guard lock(mutex_);
    auditor = std::move(auditor_);
  }
  if (auditor) auditor->stop();  // no write of it starts after this
}

bool AuditRun::startElection(const cluster::ClientConfig& config) {
  cluster::LeaderElectionConfig election = electionConfig(flags_.audit, config);
  if (const std::string wrong = cluster::validate(election); !wrong.empty()) {
    logger_.error("--leader-elect: " + wrong);
    return false;
  }
  electionApi_ = std::make_unique<cluster::ApiClient>(config);
  electionApi_->setObjectTimeout(std::min<std::chrono::milliseconds>(std::chrono::seconds(4), election.renewDeadline / 2));
  cluster::LeaderCallbacks callbacks;
  callbacks.onStartedLeading = [this] {
    logger_.info("background audit: this replica holds the Lease; auditing");
    startAuditing();
  };
  callbacks.onStoppedLeading = [this] {
    stopAuditing();
    logger_.info("background audit: Lease lost or released; standing by");
  };
  callbacks.onNewLeader = [this](const std::string& holder) {
    logger_.info("background audit: Lease holder").str("holder", holder.empty() ? "(none)" : holder);
  };
  callbacks.log = [this](bool warning, const std::string& message) { logger_.log(warning ? LogLevel::Warn : LogLevel::Info, message); };
  logger_.info("background audit: standing by for the Lease")
      .str("lease", election.namespaceName + "/" + election.name)
      .str("identity", election.identity);
  elector_ = std::make_unique<cluster::LeaderElector>(*electionApi_, std::move(election), std::move(callbacks));
  electorThread_ = std::thread([this] { elector_->run(stopping_); });
  return true;
}

void AuditRun::stop() {
  stopping_.store(true);
  if (electorThread_.joinable()) electorThread_.join();  // a leader stops its auditor, then releases
  stopAuditing();
  if (ownPolicy_) ownPolicy_->stop();
}

audit::AuditStatus AuditRun::status() const {
  audit::AuditStatus s;
  {
    std::lock_guard lock(mutex_);
    if (auditor_) s = auditor_->status();
    s.leader = elector_ ? elector_->isLeader() : auditor_ != nullptr;
  }
  s.leaderTransitions = elector_ ? elector_->timesLeading() : 0;
  return s;
}

std::unique_ptr<AuditRun> startAudit(const Flags& flags, const Logger& logger, const PolicySource& admissionPolicy,
                                     const cluster::FactsCache* facts, bool& failed) {
  if (flags.audit.mode == AuditFlags::Mode::Off) return nullptr;
  std::optional<cluster::ClientConfig> config = auditClientConfig(flags, logger, failed);
  if (!config) return nullptr;
  auto run = std::make_unique<AuditRun>(flags, logger, admissionPolicy, facts);
  if (flags.audit.policy) {
    try {
      run->ownPolicy_ = std::make_unique<PolicySource>(flags.audit.policy, logger);
    } catch (const std::exception& e) {
      logger.error("cannot load the audit policy").str("path", *flags.audit.policy).str("error", e.what());
      failed = true;
      return nullptr;
    }
    run->ownPolicy_->start(flags.policyPollInterval);
    run->policy_ = run->ownPolicy_.get();
  }
  logger.info("background audit")
      .str("from", config->describe)
      .str("reports", std::string(audit::reportFormatName(flags.audit.reportFormat)))
      .str("policy", flags.audit.policy.value_or(flags.policy.value_or("(built-in defaults)")))
      .flag("leaderElection", flags.audit.leaderElect);
  run->api_ = std::make_unique<audit::ClusterAuditApi>(*config);
  if (!flags.audit.leaderElect) {
    run->startAuditing();
  } else if (!run->startElection(*config)) {
    failed = true;
    return nullptr;
  }
  return run;
}

std::optional<std::uint64_t> serverMemory(const Flags& flags, std::optional<std::uint64_t> memoryLimit) {
  if (!memoryLimit || flags.audit.mode == AuditFlags::Mode::Off) return memoryLimit;
  const std::uint64_t reserve = std::min<std::uint64_t>(flags.audit.pendingBytes + kAuditBaseBytes, *memoryLimit / 2);
  return *memoryLimit - reserve;
}

}  // namespace gpuguard::webhook
