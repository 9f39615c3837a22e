// The webhook's watched inventory of the cluster: one reflector thread per
// resource (factResources()) lists it page by page, then watches it from the
// list's resourceVersion with bookmarks; a dropped watch resumes from the last
// resourceVersion after a jittered exponential backoff; 410 Gone (an HTTP
// status or an ERROR event) relists. Objects are reduced to fact records on
// arrival (rules/cluster_reduce.h), never kept whole.
//
// Admission reads snapshot(): an immutable ClusterFacts behind an atomic
// shared_ptr, rebuilt by a publisher thread at most every `publishInterval`
// after changes. No I/O and no lock on the request path.
//
// Fail-safe: the snapshot is null (judge as without facts) until every
// resource has synced; a resource the API does not serve (404: no Karpenter,
// no DRA) counts as synced and empty, logged once; a refused one (401/403:
// RBAC) or an unreachable API server withdraws the facts until they are back,
// and so does a watch silent for longer than the server may keep it quiet
// (CacheOptions::watchIdleTimeout): a connection that died without FIN or RST.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/api_client.h"
#include "cluster/backoff.h"
#include "cluster/facts_status.h"
#include "rules/cluster_facts.h"

namespace gpuguard::cluster {

struct CacheOptions {
  std::chrono::milliseconds publishInterval{200};
  std::size_t pageSize = 500;
  // The server ends each watch after this and the reflector re-opens it; it
  // sends a BOOKMARK just before (and about once a minute on a longer watch).
  int watchTimeoutSeconds = 45;
  // A watch that delivers nothing (no event, no bookmark, no end) for this
  // long is dead: the facts are withdrawn and the watch re-opened. 0: the
  // watch's timeoutSeconds + 15 s (60 s), within which a live server has
  // ended it.
  std::chrono::milliseconds watchIdleTimeout{0};
  // The clock of the facts' age (tests set it).
  std::function<std::chrono::steady_clock::time_point()> now = [] { return std::chrono::steady_clock::now(); };
  std::chrono::milliseconds backoffInitial{500};
  std::chrono::milliseconds backoffMax{30000};
  // Look again this often for a resource that was 404: a CRD installed after the webhook
  // started (Karpenter's NodePools) is watched within it (red team 35 D6; five minutes left
  // workloads for a NodePool judged against "no NodePools" that long).
  std::chrono::milliseconds notServedRetry{30000};
  std::vector<Resource> resources = factResources();
  // How often a thread waiting on the API server looks at stop(): its latency.
  std::chrono::milliseconds cancelCheck{250};
  // One line per state change (info) or failure (warn); never per event.
  std::function<void(bool warning, const std::string& message)> log;
};

class FactsCache {
 public:
  FactsCache(ClientConfig config, CacheOptions options);
  ~FactsCache();  // stops the threads (each notices within CacheOptions::cancelCheck)
  FactsCache(const FactsCache&) = delete;
  FactsCache& operator=(const FactsCache&) = delete;

  void start();
  void stop();

  // The facts to judge with, or null (not synced, refused, unreachable).
  std::shared_ptr<const ClusterFacts> snapshot() const { return snapshot_.load(std::memory_order_acquire); }
  // Why snapshot() is null, in a few words ("nodes unreachable", "nodes not
  // listed yet"), for the warnings of reviews judged without the facts. No
  // lock: the request path reads it.
  std::string missingReason() const { return *missing_.load(std::memory_order_acquire); }
  FactsStatus status() const;

 private:
  struct Reflector;
  void run(Reflector& reflector);
  bool listOnce(Reflector& reflector);
  void watchLoop(Reflector& reflector);
  void setState(Reflector& reflector, ResourceState state, const std::string& error);
  void apply(Reflector& reflector, WatchEvent&& event);
  void heard(Reflector& reflector);
  void silent(Reflector& reflector, const std::string& error);
  std::string whyMissing() const;  // under mutex_
  std::chrono::milliseconds idleTimeout() const;
  void publishLoop();
  void publish();
  bool sleepFor(std::chrono::milliseconds wait);

  ApiClient api_;
  CacheOptions options_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;       // builder_, the reflectors' status, dirty_
  std::condition_variable wake_;
  ClusterFactsBuilder builder_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point currentUntil_{};  // when the facts stopped being known current
  bool everCurrent_ = false;
  std::uint64_t rebuilds_ = 0;
  std::atomic<std::shared_ptr<const ClusterFacts>> snapshot_;
  std::atomic<std::shared_ptr<const std::string>> missing_;
};

}  // namespace gpuguard::cluster
