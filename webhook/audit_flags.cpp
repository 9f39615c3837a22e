#include "webhook/audit_flags.h"

#include <charconv>

#include "audit/audited_resources.h"
#include "webhook/flags.h"

namespace gpuguard::webhook {

namespace {

template <typename Number>
FlagSetter whole(Number& dst, Number min, Number max, std::string error) {
  return [&dst, min, max, error](const std::string& v) -> std::string {
    Number n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < min || n > max) return error;
    dst = n;
    return "";
  };
}

FlagSetter repeated(std::vector<std::string>& dst, std::function<bool(const std::string&)> valid, std::string error) {
  return [&dst, valid = std::move(valid), error](const std::string& v) -> std::string {
    if (!valid(v)) return error;
    dst.push_back(v);
    return "";
  };
}

FlagSetter leaseDuration(std::chrono::milliseconds& dst) {
  return [&dst](const std::string& v) -> std::string {
    const auto d = parseDuration(v);
    if (!d || *d < std::chrono::seconds(1)) return "must be a duration of at least 1s, like 15s";
    dst = *d;
    return "";
  };
}

FlagSetter name(std::optional<std::string>& dst) {
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
  s.emplace("leader-elect-resource-name", [&f](const std::string& v) -> std::string {
    if (v.empty() || v.size() > 253) return "must be a name of 1 to 253 characters";
    f.leaseName = v;
    return "";
  });
  s.emplace("leader-elect-resource-namespace", name(f.leaseNamespace));
  s.emplace("leader-elect-identity", name(f.identity));
}

}  // namespace

void addAuditFlags(AuditFlags& f, FlagSetters& s) {
  addLeaderElectionFlags(f, s);
  s.emplace("audit", [&f](const std::string& v) -> std::string {
    if (v == "on" || v == "true") f.mode = AuditFlags::Mode::On;
    else if (v == "off" || v == "false") f.mode = AuditFlags::Mode::Off;
    else if (v == "auto") f.mode = AuditFlags::Mode::Auto;
    else return "must be on, off or auto";
    return "";
  });
  s.emplace("audit-policy", [&f](const std::string& v) -> std::string {
    if (v.empty()) return "must name a file";
    f.policy = v;
    return "";
  });
  s.emplace("audit-report-format", [&f](const std::string& v) -> std::string {
    const std::optional<audit::ReportFormat> format = audit::parseReportFormat(v);
    if (!format) return "must be openreports or wgpolicyk8s";
    f.reportFormat = *format;
    return "";
  });
  s.emplace("audit-resync-interval", [&f](const std::string& v) -> std::string {
    const auto d = parseDuration(v);
    if (!d || *d < std::chrono::seconds(1)) return "must be a duration of at least 1s, like 1h";
    f.resyncInterval = *d;
    return "";
  });
  s.emplace("audit-judge-qps", whole(f.judgeQps, 0u, 100000u, "must be a number from 0 to 100000"));
  s.emplace("audit-api-qps", whole(f.apiQps, 0u, 100000u, "must be a number from 0 to 100000"));
  s.emplace("audit-api-burst", whole(f.apiBurst, 1u, 100000u, "must be a number from 1 to 100000"));
  s.emplace("audit-max-results", whole<std::size_t>(f.maxResults, 1, 10000, "must be a number from 1 to 10000"));
  s.emplace("audit-metrics-max-namespaces",
            whole<std::size_t>(f.metricsMaxNamespaces, 0, 100000, "must be a number from 0 to 100000"));
  s.emplace("audit-extra-resource",
            repeated(f.extraResources, [](const std::string& v) { return audit::parseExtraResource(v).has_value(); },
                     "must be <plural>.<group> of a custom resource, like trainers.example.com"));
  s.emplace("audit-exclude-namespace",
            repeated(f.excludeNamespaces, [](const std::string& v) { return !v.empty() && v.size() <= 63; },
                     "must be a namespace name"));
  s.emplace("audit-pending-bytes", [&f](const std::string& v) -> std::string {
    const auto n = parseByteSize(v);
    if (!n || *n < 64 * 1024) return "must be a byte size of at least 64Ki, like 16Mi";
    f.pendingBytes = *n;
    return "";
  });
}

}  // namespace gpuguard::webhook
