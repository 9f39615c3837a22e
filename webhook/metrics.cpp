#include "webhook/metrics.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "rules/registry.h"
#include "webhook/audit_metrics.h"
#include "webhook/metrics_text.h"
#include "webhook/process_metrics.h"

namespace gpuguard::webhook {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Operations the API server sends; anything else is folded into "other".
std::string_view operationLabel(std::string_view op) {
  for (std::string_view known : {"CREATE", "UPDATE", "DELETE", "CONNECT"}) {
    if (op == known) return known;
  }
  return op.empty() ? std::string_view() : "other";
}

// A Kubernetes kind is a short identifier; anything else is not worth a series.
std::string_view kindLabel(std::string_view kind) {
  if (kind.size() > 63) return "other";
  const bool plain = std::all_of(kind.begin(), kind.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
  return plain ? kind : "other";
}

// Read from the certificate being served at scrape time, so they follow every reload.
void renderCertificateExpiry(std::string& out, std::int64_t notAfter) {
  header(out, "gpuguard_serving_certificate_expiration_timestamp_seconds", "gauge",
         "notAfter of the serving certificate now served, in seconds since the Unix epoch.");
  out += "gpuguard_serving_certificate_expiration_timestamp_seconds " + std::to_string(notAfter) + "\n";
  // The same as time left, for an alert without arithmetic (< 0: expired and
  // still served; the log says so too).
  header(out, "gpuguard_serving_certificate_expiry_seconds", "gauge",
         "Seconds until the serving certificate now served expires; negative once it has expired.");
  out += "gpuguard_serving_certificate_expiry_seconds " +
         std::to_string(notAfter - static_cast<std::int64_t>(std::time(nullptr))) + "\n";
}

// Descriptor exhaustion, the loops' wake-ups and the judging pool (large requests judged off the event loops).
void renderServerLoadMetrics(std::string& out, const ServerStats& s) {
  header(out, "gpuguard_https_accept_descriptor_exhaustion_total", "counter",
         "accept() calls that failed for want of file descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM); "
         "new connections wait in the backlog meanwhile.");
  sample(out, "gpuguard_https_accept_descriptor_exhaustion_total", "", s.acceptDescriptorExhaustion);
  header(out, "gpuguard_https_connections_awaiting_client_hello", "gauge",
         "Connections accepted whose ClientHello is not all in yet: no TLS state is allocated for them.");
  sample(out, "gpuguard_https_connections_awaiting_client_hello", "", s.connectionsAwaitingClientHello);
  header(out, "gpuguard_https_tls_handshakes_in_progress", "gauge", "TLS handshakes under way (capped, see --memory-limit).");
  sample(out, "gpuguard_https_tls_handshakes_in_progress", "", s.tlsHandshakesInProgress);
  header(out, "gpuguard_https_connections_refused_total", "counter",
         "Connections closed at accept: the connection cap was reached and none was in its handshake.");
  sample(out, "gpuguard_https_connections_refused_total", "", s.connectionsRefused);
  header(out, "gpuguard_https_handshakes_evicted_total", "counter",
         "Connections closed during their handshake to make room for a newer one (connection or handshake cap reached).");
  sample(out, "gpuguard_https_handshakes_evicted_total", "", s.handshakesEvicted);
  header(out, "gpuguard_https_unverified_connections_evicted_total", "counter",
         "With --client-ca-file: connections without a verified client certificate, between requests, closed at the "
         "connection cap to make room for a newer one.");
  sample(out, "gpuguard_https_unverified_connections_evicted_total", "", s.unverifiedEvicted);
  header(out, "gpuguard_https_event_loop_wakeups_total", "counter",
         "Returns from epoll_wait, all event loops: about 10 per second per loop when idle; a loop that spins shows here.");
  sample(out, "gpuguard_https_event_loop_wakeups_total", "", s.eventLoopWakeups);
  header(out, "gpuguard_https_judging_queue_length", "gauge", "Large requests waiting for a judging thread.");
  sample(out, "gpuguard_https_judging_queue_length", "", s.judgingQueued);
  header(out, "gpuguard_https_judging_in_progress", "gauge", "Large requests being judged now.");
  sample(out, "gpuguard_https_judging_in_progress", "", s.judgingInProgress);
  header(out, "gpuguard_https_judging_rejected_total", "counter",
         "Large requests answered 503 with Retry-After because the judging queue was full.");
  sample(out, "gpuguard_https_judging_rejected_total", "", s.judgingRejected);
  header(out, "gpuguard_https_body_budget_bytes_reserved", "gauge",
         "Bytes of large request bodies held now (received, queued or judged), of the memory budget for them.");
  sample(out, "gpuguard_https_body_budget_bytes_reserved", "", s.bodyBytesReserved);
  header(out, "gpuguard_https_body_budget_rejected_total", "counter",
         "Large requests answered 503 with Retry-After, once their body was read, because the memory budget for "
         "request bodies was in use.");
  sample(out, "gpuguard_https_body_budget_rejected_total", "", s.bodyBudgetRejected);
  static constexpr std::string_view kReasons[] = {"reason=\"client_gone\"", "reason=\"deadline\"",
                                                  "reason=\"shutdown\""};
  header(out, "gpuguard_https_judging_dropped_total", "counter",
         "Large requests never judged: the client had gone, the API server's timeout had passed, or the shutdown "
         "timeout ran out while they waited.");
  for (int i = 0; i < 3; ++i) sample(out, "gpuguard_https_judging_dropped_total", kReasons[i], s.judgingDropped[i]);
  header(out, "gpuguard_https_judging_discarded_total", "counter",
         "Large requests judged, then the answer thrown away: the client left, the timeout passed or the shutdown "
         "timeout ran out during judging.");
  for (int i = 0; i < 3; ++i) sample(out, "gpuguard_https_judging_discarded_total", kReasons[i], s.judgingDiscarded[i]);
}

}  // namespace

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

Metrics::Metrics(std::string version) : version_(std::move(version)) {
  for (const Rule* rule : allRules()) ruleIds_.emplace_back(rule->id());
  findingCounters_ = std::make_unique<Counter[]>(ruleIds_.size() * kCountersPerRule);
  for (std::size_t i = 0; i < ruleIds_.size() * kCountersPerRule; ++i) findingCounters_[i].store(0, kRelaxed);
}

Metrics::Counter& Metrics::requestCounter(std::string_view operation, std::string_view kind, std::string_view result) {
  std::string key = "operation=\"" + escapeLabelValue(operationLabel(operation)) + "\",kind=\"" +
                    escapeLabelValue(kindLabel(kind)) + "\",result=\"" + escapeLabelValue(result) + "\"";
  {
    std::shared_lock lock(seriesMutex_);
    if (auto it = requestSeries_.find(key); it != requestSeries_.end()) return *it->second;
  }
  std::unique_lock lock(seriesMutex_);
  if (requestSeries_.size() >= kMaxRequestSeries) {
    key = "operation=\"" + escapeLabelValue(operationLabel(operation)) + "\",kind=\"other\",result=\"" +
          escapeLabelValue(result) + "\"";
  }
  auto& slot = requestSeries_[key];
  if (!slot) slot = std::make_unique<Counter>(0);
  return *slot;
}

void Metrics::observe(const AdmissionResult& result, std::chrono::nanoseconds duration) {
  requestCounter(result.operation, result.kind, decisionName(result.decision)).fetch_add(1, kRelaxed);

  for (const RuleHit& hit : result.hits) {
    auto it = std::find(ruleIds_.begin(), ruleIds_.end(), hit.rule);
    if (it == ruleIds_.end()) continue;
    const auto first = static_cast<std::size_t>(it - ruleIds_.begin()) * kCountersPerRule;
    findingCounters_[first + (hit.denied ? 0 : 1)].fetch_add(1, kRelaxed);
    if (hit.failedOpen) findingCounters_[first + 2].fetch_add(1, kRelaxed);
  }

  const double seconds = std::chrono::duration<double>(duration).count();
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(kDurationBuckets.begin(), kDurationBuckets.end(), seconds) - kDurationBuckets.begin());
  buckets_[bucket].fetch_add(1, kRelaxed);
  durationNanos_.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count())), kRelaxed);
  durationCount_.fetch_add(1, kRelaxed);
}

namespace {

void renderClusterFacts(std::string& out, const cluster::FactsStatus& facts) {
  using cluster::ResourceState;
  header(out, "gpuguard_cluster_facts_in_use", "gauge",
         "1 while admission judges with the cluster's facts; 0: judged without them (not synced, refused or unreachable).");
  sample(out, "gpuguard_cluster_facts_in_use", "", facts.synced ? 1 : 0);
  header(out, "gpuguard_cluster_facts_synced", "gauge",
         "1 when the resource is listed and watched (or the API server does not serve it), by resource.");
  for (const cluster::ResourceStatus& r : facts.resources) {
    const bool synced = r.state == ResourceState::Synced || r.state == ResourceState::NotServed;
    sample(out, "gpuguard_cluster_facts_synced", "resource=\"" + escapeLabelValue(r.resource) + "\"", synced ? 1 : 0);
  }
  if (facts.ageSeconds >= 0) {
    header(out, "gpuguard_cluster_facts_age_seconds", "gauge",
           "Seconds since the facts were last known current (0 while every watch is open).");
    out += "gpuguard_cluster_facts_age_seconds " + formatDouble(facts.ageSeconds) + "\n";
  }
  header(out, "gpuguard_cluster_facts_objects", "gauge", "Fact records held (reduced objects), by resource.");
  for (const cluster::ResourceStatus& r : facts.resources) {
    sample(out, "gpuguard_cluster_facts_objects", "resource=\"" + escapeLabelValue(r.resource) + "\"", r.objects);
  }
  header(out, "gpuguard_cluster_facts_watch_restarts_total", "counter",
         "Watches opened again after they ended or dropped, by resource.");
  for (const cluster::ResourceStatus& r : facts.resources) {
    sample(out, "gpuguard_cluster_facts_watch_restarts_total", "resource=\"" + escapeLabelValue(r.resource) + "\"",
           r.watchRestarts);
  }
  header(out, "gpuguard_cluster_facts_relists_total", "counter", "Lists again after 410 Gone, by resource.");
  for (const cluster::ResourceStatus& r : facts.resources) {
    sample(out, "gpuguard_cluster_facts_relists_total", "resource=\"" + escapeLabelValue(r.resource) + "\"", r.relists);
  }
}

// The HTTPS layer's connections and requests (https/server.h ServerStats).
void renderServerMetrics(std::string& out, const ServerStats& s) {
  header(out, "gpuguard_https_connections_accepted_total", "counter", "TCP connections accepted.");
  sample(out, "gpuguard_https_connections_accepted_total", "", s.connectionsAccepted);
  header(out, "gpuguard_https_connections_open", "gauge", "Connections open now.");
  sample(out, "gpuguard_https_connections_open", "", s.connectionsOpen);
  header(out, "gpuguard_https_handshake_failures_total", "counter", "TLS handshakes that failed.");
  sample(out, "gpuguard_https_handshake_failures_total", "", s.handshakeFailures);
  header(out, "gpuguard_https_timeouts_total", "counter", "Connections closed for a handshake, request or idle timeout.");
  sample(out, "gpuguard_https_timeouts_total", "", s.timeouts);
  header(out, "gpuguard_https_requests_rejected_total", "counter",
         "Requests the HTTPS layer answered itself (400, 413, 431) before the webhook saw them.");
  sample(out, "gpuguard_https_requests_rejected_total", "", s.requestsRejected);
  header(out, "gpuguard_https_client_certificate_required_total", "counter",
         "Requests answered 403 under --client-ca-file: no verified client certificate, and not a probe path.");
  sample(out, "gpuguard_https_client_certificate_required_total", "", s.clientCertificateRequired);
  header(out, "gpuguard_https_shutdown_closed_connections_total", "counter",
         "Connections still open when --shutdown-timeout ran out, closed without waiting.");
  sample(out, "gpuguard_https_shutdown_closed_connections_total", "", s.shutdownClosedConnections);
  renderServerLoadMetrics(out, s);
}

}  // namespace

std::string Metrics::render(const ExternalCounters& external) const {
  std::string out;
  out.reserve(4096);

  header(out, "gpuguard_admission_requests_total", "counter",
         "AdmissionReview requests answered, by operation, kind and result (allowed, denied, invalid).");
  {
    std::shared_lock lock(seriesMutex_);
    for (const auto& [labels, counter] : requestSeries_) {
      sample(out, "gpuguard_admission_requests_total", labels, counter->load(kRelaxed));
    }
  }

  header(out, "gpuguard_admission_findings_total", "counter",
         "Findings that denied a request (severity=\"error\") or became a warning (severity=\"warning\"), by rule.");
  for (std::size_t i = 0; i < ruleIds_.size(); ++i) {
    const std::string rule = "rule=\"" + escapeLabelValue(ruleIds_[i]) + "\"";
    sample(out, "gpuguard_admission_findings_total", rule + ",severity=\"error\"",
           findingCounters_[i * kCountersPerRule].load(kRelaxed));
    sample(out, "gpuguard_admission_findings_total", rule + ",severity=\"warning\"",
           findingCounters_[i * kCountersPerRule + 1].load(kRelaxed));
  }
  header(out, "gpuguard_admission_failed_open_total", "counter",
         "Errors reported as warnings, not denials, because the cluster facts that could overturn them were "
         "missing (configured, but not synced, refused or unreachable), by rule.");
  for (std::size_t i = 0; i < ruleIds_.size(); ++i) {
    if (judgedWithoutFactsAgainst(ruleIds_[i]).empty()) continue;  // the facts cannot overturn its errors
    sample(out, "gpuguard_admission_failed_open_total", "rule=\"" + escapeLabelValue(ruleIds_[i]) + "\"",
           findingCounters_[i * kCountersPerRule + 2].load(kRelaxed));
  }

  header(out, "gpuguard_admission_duration_seconds", "histogram",
         "Time to review one AdmissionReview, from the request body to the response body.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kDurationBuckets.size(); ++i) {
    cumulative += buckets_[i].load(kRelaxed);
    sample(out, "gpuguard_admission_duration_seconds_bucket", "le=\"" + formatDouble(kDurationBuckets[i]) + "\"",
           cumulative);
  }
  cumulative += buckets_[kDurationBuckets.size()].load(kRelaxed);
  const std::uint64_t count = std::max(cumulative, durationCount_.load(kRelaxed));
  sample(out, "gpuguard_admission_duration_seconds_bucket", "le=\"+Inf\"", count);
  out += "gpuguard_admission_duration_seconds_sum " +
         formatDouble(static_cast<double>(durationNanos_.load(kRelaxed)) / 1e9) + "\n";
  sample(out, "gpuguard_admission_duration_seconds_count", "", count);

  header(out, "gpuguard_policy_reloads_total", "counter",
         "Policy file reloads after a change on disk; a failed one keeps the previous policy.");
  sample(out, "gpuguard_policy_reloads_total", "result=\"success\"", external.policyReloadSuccesses);
  sample(out, "gpuguard_policy_reloads_total", "result=\"failure\"", external.policyReloadFailures);

  const ServerStats s = external.server.value_or(ServerStats{});
  header(out, "gpuguard_certificate_reloads_total", "counter",
         "Serving certificate reloads after a change on disk; a failed one keeps the previous pair.");
  sample(out, "gpuguard_certificate_reloads_total", "result=\"success\"", s.certificateReloads);
  sample(out, "gpuguard_certificate_reloads_total", "result=\"failure\"", s.certificateReloadFailures);
  header(out, "gpuguard_client_ca_reloads_total", "counter",
         "Client CA file (--client-ca-file) reloads after a change on disk; a failed one keeps the previous CAs.");
  sample(out, "gpuguard_client_ca_reloads_total", "result=\"success\"", s.clientCaReloads);
  sample(out, "gpuguard_client_ca_reloads_total", "result=\"failure\"", s.clientCaReloadFailures);

  if (external.server) renderServerMetrics(out, s);

  if (external.certificateNotAfter) renderCertificateExpiry(out, *external.certificateNotAfter);
  if (external.clusterFacts) renderClusterFacts(out, *external.clusterFacts);
  if (external.audit) renderAudit(out, *external.audit, external.auditMaxNamespaces);

  header(out, "gpuguard_build_info", "gauge", "Always 1; the version is a label.");
  sample(out, "gpuguard_build_info", "version=\"" + escapeLabelValue(version_) + "\"", 1);
  renderProcessMetrics(out);
  return out;
}

}  // namespace gpuguard::webhook
