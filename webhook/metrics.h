// Prometheus metrics in the text exposition format 0.0.4 (GET /metrics).
//
//   gpuguard_admission_requests_total{operation,kind,result}   counter
//   gpuguard_admission_findings_total{rule,severity}           counter
//       severity="error": the finding denied a request; "warning": it became
//       a response warning (warning rules, and errors an UPDATE did not introduce)
//   gpuguard_admission_failed_open_total{rule}                 counter: errors warned, not denied, while the
//       cluster facts that could overturn them were missing (rules with RuleDoc::withoutFacts)
//   gpuguard_admission_duration_seconds                        histogram
//   gpuguard_certificate_reloads_total{result}                 counter (from the HTTPS server)
//   gpuguard_policy_reloads_total{result}                      counter
//   gpuguard_https_*                                           connection counters, event-loop wake-ups,
//                                                              the judging pool (queue, rejected, dropped)
//   gpuguard_cluster_facts_synced{resource}                    gauge 0/1 (1: listed and watched, or not served)
//   gpuguard_cluster_facts_in_use                              gauge 0/1: admission judges with cluster facts
//   gpuguard_cluster_facts_age_seconds                         gauge, since the facts were last known current
//   gpuguard_cluster_facts_objects{resource}                   gauge, fact records held
//   gpuguard_cluster_facts_watch_restarts_total{resource}      counter
//   gpuguard_cluster_facts_relists_total{resource}             counter (410 Gone)
//   gpuguard_audit_*                                           the background audit (webhook/audit_metrics.h)
//   gpuguard_build_info{version}                               gauge, always 1
//   gpuguard_serving_certificate_expiration_timestamp_seconds  gauge, the served leaf's notAfter
//   gpuguard_serving_certificate_expiry_seconds                gauge, notAfter - now (< 0: expired)
//   process_*                                                  see process_metrics.h
//
// Recording uses relaxed atomics only (findings, histogram), plus a shared
// lock to find the counter of an (operation, kind, result) series; the
// exclusive lock is taken only the first time a series appears. The number of
// series is capped so that a client inventing kinds cannot grow memory
// without bound.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "audit/audit_status.h"
#include "cluster/facts_status.h"
#include "webhook/admission.h"
#include "https/server.h"

namespace gpuguard::webhook {

// Counters that live elsewhere, read when /metrics is scraped.
struct ExternalCounters {
  std::optional<ServerStats> server;
  // notAfter of the serving certificate now served (seconds since the epoch).
  std::optional<std::int64_t> certificateNotAfter;
  std::uint64_t policyReloadSuccesses = 0;
  std::uint64_t policyReloadFailures = 0;
  // The watched cluster facts (--cluster-facts); unset when they are off.
  std::optional<cluster::FactsStatus> clusterFacts;
  // The background audit (--audit); unset when it is off. Namespaces past
  // the cap share the series namespace="_other".
  std::optional<audit::AuditStatus> audit;
  std::size_t auditMaxNamespaces = 500;
};

class Metrics {
 public:
  static constexpr std::array<double, 14> kDurationBuckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   2.5};
  static constexpr std::size_t kMaxRequestSeries = 1000;

  explicit Metrics(std::string version = "");

  // One answered AdmissionReview (any decision, including 400s).
  void observe(const AdmissionResult& result, std::chrono::nanoseconds duration);

  std::string render(const ExternalCounters& external = {}) const;

 private:
  using Counter = std::atomic<std::uint64_t>;
  Counter& requestCounter(std::string_view operation, std::string_view kind, std::string_view result);

  std::string version_;
  std::vector<std::string> ruleIds_;              // registry order
  static constexpr std::size_t kCountersPerRule = 3;  // denied, warned, of those warned: failed open
  std::unique_ptr<Counter[]> findingCounters_;    // [rule * kCountersPerRule + (denied 0, warned 1, failed open 2)]
  std::array<Counter, kDurationBuckets.size() + 1> buckets_{};  // per bucket, not cumulative; last: +Inf
  Counter durationNanos_{0};
  Counter durationCount_{0};

  mutable std::shared_mutex seriesMutex_;
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> requestSeries_;  // key: rendered labels
};

// Escapes a label value for the text format (\\, \" and \n).
std::string escapeLabelValue(std::string_view value);

}  // namespace gpuguard::webhook
