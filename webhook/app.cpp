#include "webhook/app.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "webhook/malloc_tuning.h"

namespace gpuguard::webhook {
namespace {

// Requests at least this large give their memory back when answered.
constexpr std::size_t kReleaseMemoryAfterBytes = 256 * 1024;

// Each thread's reaches of the pods it judged (rules/reach_cache.h), valid
// for the policy and the facts snapshot they were judged with. The weak
// pointers keep those two's control blocks: a new snapshot can never pass
// for the old one at a reused address.
class ThreadReachCache {
 public:
  ReachCache* with(const std::shared_ptr<const AdmissionPolicy>& policy,
                   const std::shared_ptr<const ClusterFacts>& facts) {
    if (!facts) return nullptr;
    if (!sameOwner(policy_, policy) || !sameOwner(facts_, facts)) {
      cache_.clear();
      policy_ = policy;
      facts_ = facts;
    }
    return &cache_;
  }

 private:
  template <class T>
  static bool sameOwner(const std::weak_ptr<const T>& kept, const std::shared_ptr<const T>& now) {
    return !kept.owner_before(now) && !now.owner_before(kept);
  }
  std::weak_ptr<const AdmissionPolicy> policy_;
  std::weak_ptr<const ClusterFacts> facts_;
  ReachCache cache_;
};
thread_local ThreadReachCache threadReachCache;

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.contentType = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

HttpResponse methodNotAllowed(std::string_view allow) {
  HttpResponse r = text(405, "method not allowed\n");
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

// The rules of the hits that `bool RuleHit::*flag` marks (all of them: nullptr), once each.
std::vector<std::string> uniqueRules(const std::vector<RuleHit>& hits, bool RuleHit::*flag = nullptr) {
  std::vector<std::string> out;
  for (const RuleHit& h : hits) {
    if (flag && !(h.*flag)) continue;
    if (std::find(out.begin(), out.end(), h.rule) == out.end()) out.push_back(h.rule);
  }
  return out;
}

}  // namespace

WebhookApp::WebhookApp(const PolicySource& policy, Metrics& metrics, const Logger& logger, AdmissionLimits limits)
    : policy_(policy), metrics_(metrics), logger_(logger), limits_(limits) {}

bool WebhookApp::ready() const {
  const HttpsServer* server = server_.load(std::memory_order_acquire);
  return serving_.load(std::memory_order_acquire) && server && server->certificateLoaded();
}

HttpResponse WebhookApp::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/validate" || path == "/mutate") {
    if (request.method != "POST") return methodNotAllowed("POST");
    return admit(request, path == "/mutate");
  }
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (path == "/healthz" || path == "/livez") {
    return get ? text(200, "ok\n") : methodNotAllowed("GET, HEAD");
  }
  if (path == "/readyz") {
    if (!get) return methodNotAllowed("GET, HEAD");
    return ready() ? text(200, "ok\n") : text(503, "not ready: no certificate loaded or not serving\n");
  }
  if (path == "/metrics") {
    if (!get) return methodNotAllowed("GET, HEAD");
    ExternalCounters external;
    if (const HttpsServer* server = server_.load(std::memory_order_acquire)) {
      external.server = server->stats();
      external.certificateNotAfter = server->certificateNotAfter();
    }
    external.policyReloadSuccesses = policy_.reloadSuccesses();
    external.policyReloadFailures = policy_.reloadFailures();
    if (const cluster::FactsCache* facts = facts_.load(std::memory_order_acquire)) external.clusterFacts = facts->status();
    if (const AuditRun* auditor = audit_.load(std::memory_order_acquire)) {
      external.audit = auditor->status();
      external.auditMaxNamespaces = auditMaxNamespaces_.load(std::memory_order_relaxed);
    }
    HttpResponse r = text(200, metrics_.render(external));
    r.contentType = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  return text(404, "not found: the webhook serves POST /validate, POST /mutate, GET /healthz, /readyz and /metrics\n");
}

HttpResponse WebhookApp::admit(const HttpRequest& request, bool mutating) {
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<const AdmissionPolicy> policy = policy_.current();
  // The facts as they are now: an immutable snapshot, no I/O, no lock.
  const cluster::FactsCache* cache = facts_.load(std::memory_order_acquire);
  const std::shared_ptr<const ClusterFacts> facts = cache ? cache->snapshot() : nullptr;
  // Configured but missing (not synced, refused, unreachable): what they could overturn fails open.
  // A large object is neither kept nor copied between reviews (what a thread holds stays small).
  ReachCache* reaches = request.body.size() < kKeptBetweenReviewsBelowBytes ? threadReachCache.with(policy, facts) : nullptr;
  const FactsInUse judgedWith{facts.get(), cache && !facts ? cache->missingReason() : std::string(), reaches};
  AdmissionResult result = mutating ? mutate(request.body, *policy, limits_, facts.get())
                                    : review(request.body, *policy, limits_, judgedWith);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  metrics_.observe(result, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed));
  logReview(result, std::chrono::duration<double, std::milli>(elapsed).count(), request, facts != nullptr);
  // The tree of a large object is freed by now; without this the process
  // would keep its peak size (the manifests limit memory to 256 MiB).
  if (request.body.size() >= kReleaseMemoryAfterBytes) releaser_.request();

  HttpResponse response;
  response.status = result.httpStatus;
  response.contentType = "application/json";
  response.body = std::move(result.body);
  return response;
}

void WebhookApp::logReview(const AdmissionResult& r, double millis, const HttpRequest& request, bool withFacts) const {
  LogLevel level = LogLevel::Debug;
  if (r.decision == Decision::Invalid) level = r.httpStatus >= 500 ? LogLevel::Error : LogLevel::Warn;
  else if (r.decision == Decision::Denied || r.warnings > 0) level = LogLevel::Info;
  if (!logger_.enabled(level)) return;

  LogLine line = logger_.log(level, r.decision == Decision::Invalid ? "invalid admission request" : "admission");
  line.str("uid", r.uid)
      .str("kind", r.kind)
      .str("group", r.group)
      .str("namespace", r.namespaceName)
      .str("name", r.name)
      .str("operation", r.operation);
  if (!r.subResource.empty()) line.str("subResource", r.subResource);
  line.flag("dryRun", r.dryRun).str("decision", decisionName(r.decision)).flag("clusterFacts", withFacts);
  if (!r.skipped.empty()) line.str("skipped", r.skipped);
  if (!r.error.empty()) line.str("error", r.error).str("peer", request.peer);
  line.strings("rules", uniqueRules(r.hits)).strings("deniedBy", uniqueRules(r.hits, &RuleHit::denied));
  if (std::vector<std::string> failedOpen = uniqueRules(r.hits, &RuleHit::failedOpen); !failedOpen.empty()) {
    line.strings("failedOpen", failedOpen);  // errors warned: the facts that could overturn them were missing
  }
  line.num("warnings", static_cast<long long>(r.warnings)).num("durationMs", millis);
}

}  // namespace gpuguard::webhook
