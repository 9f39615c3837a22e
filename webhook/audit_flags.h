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
};

using FlagSetter = std::function<std::string(const std::string&)>;
using FlagSetters = std::map<std::string, FlagSetter, std::less<>>;

// Adds the --audit-* flags that take a value.
void addAuditFlags(AuditFlags& flags, FlagSetters& setters);

}  // namespace gpuguard::webhook
