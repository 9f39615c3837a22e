#include "webhook/audit_flags.h"

#include "audit/audited_resources.h"
#include "webhook/flag_setters.h"

namespace gpuguard::webhook {

namespace {

FlagSetter repeated(std::vector<std::string>& dst, std::function<bool(const std::string&)> valid, std::string error) {
  return [&dst, valid = std::move(valid), error](const std::string& v) -> std::string {
    if (!valid(v)) return error;
    dst.push_back(v);
    return "";
  };
}

FlagSetter leaseDuration(std::chrono::milliseconds& dst) {
  return durationAtLeast(dst, std::chrono::seconds(1), "must be a duration of at least 1s, like 15s");
}

// A Kubernetes object name, into a std::string or an optional one.
template <typename Text>
FlagSetter name(Text& dst) {
  return [&dst](const std::string& v) -> std::string {
    if (v.empty() || v.size() > 253) return "must be a name of 1 to 253 characters";
    dst = v;
    return "";
  };
}

void addLeaderElectionFlags(AuditFlags& f, FlagSetters& s) {
  s.emplace("leader-elect", [&f](const std::string& v) -> std::string {
    if (v != "true" && v != "false") return "must be true or false";
    f.leaderElect = v == "true";
    return "";
  });
  s.emplace("leader-elect-lease-duration", leaseDuration(f.leaseDuration));
  s.emplace("leader-elect-renew-deadline", leaseDuration(f.renewDeadline));
  s.emplace("leader-elect-retry-period", leaseDuration(f.retryPeriod));
  s.emplace("leader-elect-resource-name", name(f.leaseName));
  s.emplace("leader-elect-resource-namespace", name(f.leaseNamespace));
  s.emplace("leader-elect-identity", name(f.identity));
}

}  // namespace

void addAuditFlags(AuditFlags& f, FlagSetters& s) {
  addLeaderElectionFlags(f, s);
  s.emplace("audit", onOffAuto(f.mode));
  s.emplace("audit-policy", nonEmpty(f.policy, "must name a file"));
  s.emplace("audit-report-format", [&f](const std::string& v) -> std::string {
    const std::optional<audit::ReportFormat> format = audit::parseReportFormat(v);
    if (!format) return "must be openreports or wgpolicyk8s";
    f.reportFormat = *format;
    return "";
  });
  s.emplace("audit-resync-interval",
            durationAtLeast(f.resyncInterval, std::chrono::seconds(1), "must be a duration of at least 1s, like 1h"));
  s.emplace("audit-judge-qps", wholeNumber(f.judgeQps, 0u, 100000u, "must be a number from 0 to 100000"));
  s.emplace("audit-api-qps", wholeNumber(f.apiQps, 0u, 100000u, "must be a number from 0 to 100000"));
  s.emplace("audit-api-burst", wholeNumber(f.apiBurst, 1u, 100000u, "must be a number from 1 to 100000"));
  s.emplace("audit-max-results", wholeNumber<std::size_t>(f.maxResults, 1, 10000, "must be a number from 1 to 10000"));
  s.emplace("audit-metrics-max-namespaces",
            wholeNumber<std::size_t>(f.metricsMaxNamespaces, 0, 100000, "must be a number from 0 to 100000"));
  s.emplace("audit-extra-resource",
            repeated(f.extraResources, [](const std::string& v) { return audit::parseExtraResource(v).has_value(); },
                     "must be <plural>.<group> of a custom resource, like trainers.example.com"));
  s.emplace("audit-exclude-namespace",
            repeated(f.excludeNamespaces, [](const std::string& v) { return !v.empty() && v.size() <= 63; },
                     "must be a namespace name"));
  s.emplace("audit-pending-bytes", byteSize(f.pendingBytes, 64 * 1024, "must be a byte size of at least 64Ki, like 16Mi"));
}

}  // namespace gpuguard::webhook
