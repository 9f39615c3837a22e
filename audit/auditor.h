// The background audit (docs/audit.md): the objects the cluster already
// runs, judged with the same engine, policy and cluster facts as admission,
// their findings written as one report per namespace.
//
//   reflectors   one thread per audited resource: list (paged), then watch
//                from the list's resourceVersion; 410 relists; a resource the
//                API does not serve is looked for again every notServedRetry.
//                Each object: the skip rule, then the index's freshness (same
//                resourceVersion or judge key and generations: nothing to do),
//                else it is queued. A complete list forgets what it no longer
//                holds (deleted while no watch was open).
//   worker       one thread: judges queued objects (a token bucket paces
//                it), records their results, and writes the reports of the
//                namespaces whose results changed (never per event: at most
//                every flushInterval, and only when the digest changed;
//                during the first full scan, when it completes).
//   control      one thread: a new policy generation relists everything
//                (trigger "policy"); a new facts snapshot, once settled and
//                at most every factsMinInterval, relists too but re-judges
//                only facts-sensitive objects ("facts"); every resyncInterval
//                a full relist ("resync"). It also takes the reports'
//                inventory at start (identical results rewrite nothing).
//
// Admission is never blocked by it: no lock is shared with the request path
// (the judge reads the policy and facts snapshots through atomics), its
// threads run SCHED_IDLE, its memory is bounded (queue bodies, results per
// object, no object bodies kept).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_api.h"
#include "audit/audit_status.h"
#include "audit/audited_resources.h"
#include "audit/object_index.h"
#include "audit/report_model.h"
#include "audit/report_writer.h"
#include "audit/token_bucket.h"
#include "audit/work_queue.h"
#include "cluster/backoff.h"
#include "rules/cluster_facts.h"
#include "rules/finding.h"

namespace gpuguard::audit {

// One object judged as admission would judge its creation.
struct Judgement {
  bool exempt = false;             // an exempt namespace: no results
  std::vector<Finding> findings;   // suppressed ones marked (allowSuppressions), else none suppressed
  bool factsSensitive = false;     // its findings may change with the cluster facts
};
// The webhook's judge: its audit policy (read through an atomic snapshot),
// exemptions and suppression rule, with `facts` (null: without them).
using JudgeFn = std::function<Judgement(const nlohmann::json& object, const ClusterFacts* facts)>;

struct AuditorOptions {
  std::vector<AuditedResource> resources = auditedResources();
  std::set<std::string> excludeNamespaces;  // --audit-exclude-namespace
  ReportFormat format = ReportFormat::OpenReports;
  ReportBounds bounds;
  std::chrono::milliseconds resyncInterval{std::chrono::hours(1)};
  // The first list waits this long for the facts (judging twice, without
  // and then with them, would rewrite every report).
  std::chrono::milliseconds factsGrace{std::chrono::seconds(30)};
  std::chrono::milliseconds factsSettle{std::chrono::seconds(10)};
  std::chrono::milliseconds factsMinInterval{std::chrono::seconds(60)};
  std::chrono::milliseconds notServedRetry{std::chrono::minutes(5)};
  std::chrono::milliseconds flushInterval{std::chrono::seconds(1)};
  // Until the first full scan completes, reports are written when it does, or
  // this long after the last write (a huge cluster shows progress): a report
  // rewritten every second as it grows costs the API server an apply of up to
  // 1 MiB each time, and its readers a watch event, for nothing.
  std::chrono::milliseconds firstScanFlushInterval{std::chrono::seconds(60)};
  std::chrono::milliseconds tick{std::chrono::seconds(1)};  // the control loop's look at policy and facts
  std::chrono::milliseconds backoffInitial{500};
  std::chrono::milliseconds backoffMax{30000};
  std::size_t pendingBytes = 16u << 20;
  double judgeQps = 50;
  double apiQps = 20;
  double apiBurst = 40;
  // The audit policy's generation (grows with each reload); unset: 0.
  std::function<std::uint64_t()> policyGeneration;
  // The cluster facts now (null: none); unset: judged without facts.
  std::function<std::shared_ptr<const ClusterFacts>()> facts;
  std::function<bool()> mayWrite;      // the leader's fence; unset: always
  // Discovery: the resources as served (versions, kinds); run once on the
  // control thread before anything is listed. Unset: the table as it is.
  std::function<std::vector<AuditedResource>(std::vector<AuditedResource>, const std::atomic<bool>& cancel)>
      resolveResources;
  std::function<Timestamp()> now;      // wall clock for first-seen times; unset: the system clock
  bool idleScheduling = true;          // the threads run SCHED_IDLE
  std::function<void(bool warning, const std::string& message)> log;
};

class Auditor {
 public:
  Auditor(AuditApi& api, JudgeFn judge, AuditorOptions options);
  ~Auditor();  // stops
  Auditor(const Auditor&) = delete;
  Auditor& operator=(const Auditor&) = delete;

  void start();
  void stop();
  AuditStatus status() const;
  // Complete scans so far (every resource listed, or not served/refused).
  std::uint64_t completedScans() const { return completedScans_.load(); }
  // A scan complete, nothing queued or being judged, no report being or left
  // to be written (tests).
  bool idle() const;

 private:
  struct Reflector;
  // auditor.cpp: lifecycle, reflectors, control loop.
  void runReflector(Reflector& r);
  bool listOnce(Reflector& r);
  void watchLoop(Reflector& r);
  void offer(Reflector& r, nlohmann::json&& object, Trigger trigger, bool waiting);
  void relistAll(Trigger why);
  void controlLoop();
  void watchFacts(std::shared_ptr<const ClusterFacts>& seen, std::chrono::steady_clock::time_point& seenAt,
                  std::chrono::steady_clock::time_point& lastRejudge);
  void takeInventory();
  void resolveResources();
  void checkScanComplete();
  bool sleepFor(std::chrono::milliseconds wait);
  void setState(Reflector& r, std::string_view state, bool synced, const std::string& error);
  // auditor_worker.cpp: judging and writing.
  void workerLoop();
  void process(const std::string& uid, WorkItem item);
  std::optional<nlohmann::json> refetch(const std::string& uid, const WorkItem& item);
  void judgeAndRecord(const std::string& uid, const nlohmann::json& object, const WorkItem& item);
  void flush();
  std::optional<std::size_t> resourceOfObject(const AuditedObject& object) const;
  std::string answeredVersion(std::size_t resource) const;
  Generations generationsNow() const;
  std::uint64_t policyGeneration() const { return options_.policyGeneration ? options_.policyGeneration() : 0; }

  AuditApi& api_;
  JudgeFn judge_;
  AuditorOptions options_;
  std::atomic<bool> stopping_{false};
  TokenBucket judgeBucket_;
  TokenBucket apiBucket_;
  WorkQueue queue_;
  ObjectIndex index_;
  ReportWriter writer_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::thread> threads_;

  mutable std::mutex mutex_;  // the fields below
  std::condition_variable wake_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> judged_;
  std::uint64_t scan_ = 1;                          // the scan in progress
  std::chrono::steady_clock::time_point scanStart_;
  double lastScanEnd_ = 0, lastScanDuration_ = 0;
  bool inventoryTaken_ = false;
  bool reportsServed_ = false;
  std::chrono::steady_clock::time_point lastInventoryTry_{};
  // When the inventory is taken again while the reports are not written: notServedRetry after a
  // 404 or a refusal (401/403), a backoff after a failed list (control thread only: inventoryBackoff_).
  std::chrono::milliseconds inventoryRetry_{0};
  cluster::Backoff inventoryBackoff_;
  std::uint64_t completedScan_ = 0;
  std::atomic<std::uint64_t> completedScans_{0};
  // The facts objects are judged with, and their generation (one snapshot, so both agree).
  struct FactsState {
    std::shared_ptr<const ClusterFacts> facts;
    std::uint64_t generation = 0;
  };
  std::atomic<std::shared_ptr<const FactsState>> facts_;
  std::atomic<bool> released_{false};  // the reflectors may list (inventory taken, facts or their grace)
  std::atomic<bool> working_{false};
  bool otherFormatLeft_ = true;  // worker only: our reports of the other format may remain
  std::atomic<std::uint64_t> judgeNanos_{0};
};

}  // namespace gpuguard::audit
