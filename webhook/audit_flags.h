// The background audit's flags (docs/webhook.md, "Background audit"; the
// design's §8 names). Parsed with the other flags (webhook/flags.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit/report_model.h"

namespace gpuguard::webhook {

struct AuditFlags {
  // off (the default): no audit. on: audit with the cluster configuration
  // (--kubeconfig, else the service account). auto: on when a configuration
  // is found.
  enum class Mode { Off, On, Auto } mode = Mode::Off;
  // The policy the audit judges with (the chart's enforce rendering in audit
  // mode, so `fail` means "enforce would deny"); default: --policy.
  std::optional<std::string> policy;
  audit::ReportFormat reportFormat = audit::ReportFormat::OpenReports;
  std::chrono::milliseconds resyncInterval{std::chrono::hours(1)};
  unsigned judgeQps = 50;  // 0: unlimited
  unsigned apiQps = 20;
  unsigned apiBurst = 40;
  std::size_t maxResults = 100;  // per object
  std::vector<std::string> extraResources;     // plural.group, repeatable
  std::vector<std::string> excludeNamespaces;  // repeatable
  std::size_t pendingBytes = 16u << 20;
  std::size_t metricsMaxNamespaces = 500;
  bool printResources = false;  // --print-audit-resources: the table, then exit
  // Leader election (kube-scheduler's --leader-elect* names): only the holder
  // of the Lease audits; the other replicas stand by cold.
  bool leaderElect = true;
  std::chrono::milliseconds leaseDuration{std::chrono::seconds(15)};
  std::chrono::milliseconds renewDeadline{std::chrono::seconds(10)};
  std::chrono::milliseconds retryPeriod{std::chrono::seconds(2)};
  std::string leaseName = "gpuguard-audit";
  std::optional<std::string> leaseNamespace;  // default: $POD_NAMESPACE, else the configuration's namespace
  std::optional<std::string> identity;        // default: $POD_NAME (else the host name) + "_" + 8 random hex
};

using FlagSetter = std::function<std::string(const std::string&)>;
using FlagSetters = std::map<std::string, FlagSetter, std::less<>>;

// Adds the --audit-* flags that take a value.
void addAuditFlags(AuditFlags& flags, FlagSetters& setters);

}  // namespace gpuguard::webhook
