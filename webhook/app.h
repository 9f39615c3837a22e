// The webhook application behind the HTTPS server: routes requests to the
// admission review, health, readiness and metrics, and records every review
// in the metrics and the log. Transport-free, so tests drive it directly.
//
//   POST /validate  -> review() with the active policy
//   POST /mutate    -> mutate(): the JSONPatch of the fixes of the rules under `mutate:`
//   GET  /healthz   -> 200 "ok" (also /livez)
//   GET  /readyz    -> 200 "ok" once serving with a certificate, else 503
//   GET  /metrics   -> Prometheus text format 0.0.4
#pragma once

#include <atomic>

#include "cluster/facts_cache.h"
#include "webhook/admission.h"
#include "webhook/audit_run.h"
#include "https/server.h"
#include "webhook/log.h"
#include "webhook/malloc_tuning.h"
#include "webhook/metrics.h"
#include "webhook/policy_source.h"

namespace gpuguard::webhook {

class WebhookApp {
 public:
  WebhookApp(const PolicySource& policy, Metrics& metrics, const Logger& logger, AdmissionLimits limits = {});

  HttpResponse handle(const HttpRequest& request);

  // The server whose certificate state /readyz reports and whose counters
  // /metrics shows; set once it exists. `serving` is true from a successful
  // start() until shutdown begins.
  void attach(const HttpsServer* server) { server_.store(server, std::memory_order_release); }
  void setServing(bool serving) { serving_.store(serving, std::memory_order_release); }
  // The watched cluster facts each review is judged with (their snapshot at
  // the time; null before they are synced), and whose state /metrics shows.
  // Unset: --cluster-facts=off or no configuration, judged without them.
  void attachClusterFacts(const cluster::FactsCache* facts) { facts_.store(facts, std::memory_order_release); }
  // The background audit whose state /metrics shows (--audit); unset: off.
  // `maxNamespaces`: namespaces with their own gpuguard_audit_findings series.
  void attachAudit(const AuditRun* auditor, std::size_t maxNamespaces) {
    auditMaxNamespaces_.store(maxNamespaces, std::memory_order_relaxed);
    audit_.store(auditor, std::memory_order_release);
  }
  bool ready() const;

 private:
  HttpResponse admit(const HttpRequest& request, bool mutating);
  void logReview(const AdmissionResult& r, double millis, const HttpRequest& request, bool withFacts) const;

  const PolicySource& policy_;
  Metrics& metrics_;
  const Logger& logger_;
  AdmissionLimits limits_;
  std::atomic<const HttpsServer*> server_{nullptr};
  std::atomic<const cluster::FactsCache*> facts_{nullptr};
  std::atomic<const AuditRun*> audit_{nullptr};
  std::atomic<std::size_t> auditMaxNamespaces_{500};
  std::atomic<bool> serving_{false};
  MemoryReleaser releaser_;  // large requests' memory, given back off the request path
};

}  // namespace gpuguard::webhook
